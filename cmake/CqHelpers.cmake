# Target helpers: one library per module, tests and benchmarks with the project's warnings.

set(CQ_WARNINGS -Wall -Wextra -Werror)
# GCC 12's -Wmaybe-uninitialized reports the inactive member of a moved std::variant (our
# Result<T>) as uninitialized whenever inlining changes (a false positive that comes and goes with
# unrelated edits); -Wuninitialized stays on, and clang builds check the same code.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND CQ_WARNINGS -Wno-maybe-uninitialized)
endif()
# Every clang build checks the locking annotations (base/thread_annotations.h, base/mutex.h);
# scripts/thread-safety.sh is the one `make check` runs.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  list(APPEND CQ_WARNINGS -Wthread-safety)
endif()

# cq_library(NAME core SRCS a.cc b.cc DEPS chronoq::base [PRIVATE_DEPS ...])
# cq_library(NAME backend INTERFACE DEPS chronoq::core)      (header-only)
# Creates cq_<name> and the alias chronoq::<name>. Headers are included as "<folder>/<file>.h",
# rooted at src/ (the folder is the one of this CMakeLists.txt, e.g. "storage/rocksdb").
#
# Layering is enforced by the build: each library gets an include root of its own that holds
# links to its own headers only (not those of a sub-folder that is a library itself), published
# to whoever links it. So a module sees the headers of the modules it links, and including any
# other fails to compile ("file not found"). STYLE.md section 2 lists who may link whom.
function(cq_library)
  cmake_parse_arguments(A "INTERFACE" "NAME" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
  set(root ${CMAKE_BINARY_DIR}/include/${A_NAME})
  file(REMOVE_RECURSE ${root})
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
       ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
  foreach(h ${headers})
    get_filename_component(sub ${h} DIRECTORY)
    if(sub AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${sub}/CMakeLists.txt)
      continue()  # a library of its own (storage/rocksdb inside storage)
    endif()
    get_filename_component(dir ${root}/${folder}/${h} DIRECTORY)
    file(MAKE_DIRECTORY ${dir})
    file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR}/${h} ${root}/${folder}/${h} SYMBOLIC)
  endforeach()
  if(A_INTERFACE)
    add_library(cq_${A_NAME} INTERFACE)
    target_include_directories(cq_${A_NAME} INTERFACE ${root})
    target_link_libraries(cq_${A_NAME} INTERFACE ${A_DEPS})
  else()
    add_library(cq_${A_NAME} STATIC ${A_SRCS})
    target_include_directories(cq_${A_NAME} PUBLIC ${root})
    target_compile_options(cq_${A_NAME} PRIVATE ${CQ_WARNINGS})
    target_link_libraries(cq_${A_NAME} PUBLIC ${A_DEPS} PRIVATE ${A_PRIVATE_DEPS})
  endif()
  add_library(chronoq::${A_NAME} ALIAS cq_${A_NAME})
endfunction()

# cq_test(NAME core_test SRCS x_test.cc DEPS chronoq::core LABELS unit [TIMEOUT 120]
#         [VARIANTS "memory:CQ_TEST_STORAGE=memory" "embedded:CQ_TEST_STORAGE=embedded"])
# With VARIANTS, the test cases are registered once per variant, named "<variant>.<case>", each
# run with its environment assignment.
# With GROUPS "<name>:<gtest pattern>" ..., the cases matching a pattern are not registered one by
# one but run together as one test "<target>.<name>" (one process): for cases that share an
# expensive fixture started once per process, such as a Redis Sentinel set or Cluster
# (tests/testutil/redis_servers.h), which one process per case would start hundreds of times.
function(cq_test)
  cmake_parse_arguments(A "" "NAME;TIMEOUT" "SRCS;DEPS;LABELS;VARIANTS;GROUPS" ${ARGN})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 300)
  endif()
  # Sanitizer builds run the same work several times slower (ThreadSanitizer 5-15 times, the
  # server under test included): their cases get the time that makes the bound mean the same.
  if(CQ_SANITIZE STREQUAL "thread")
    math(EXPR A_TIMEOUT "${A_TIMEOUT} * 4")
  elseif(CQ_SANITIZE)
    math(EXPR A_TIMEOUT "${A_TIMEOUT} * 2")
  endif()
  add_executable(${A_NAME} ${A_SRCS})
  target_compile_options(${A_NAME} PRIVATE ${CQ_WARNINGS})
  target_include_directories(${A_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  # gtest_discover_tests flattens PROPERTIES, so a list of labels ("unit;contract") would turn its
  # second label into a property name (and lose TIMEOUT). Pass the first label there and set the
  # whole list from a script ctest includes after the discovered tests (<target>_TESTS).
  set(first_label "")
  if(A_LABELS)
    list(GET A_LABELS 0 first_label)
  endif()
  if(NOT A_VARIANTS)
    set(A_VARIANTS "_")
  endif()
  set(grouped "")
  foreach(group ${A_GROUPS})
    string(REPLACE ":" ";" parts "${group}")
    list(GET parts 0 gname)
    list(GET parts 1 gpattern)
    list(APPEND grouped "${gpattern}")
    add_test(NAME ${A_NAME}.${gname} COMMAND ${A_NAME} --gtest_filter=${gpattern} --gtest_brief=1)
    set_tests_properties(${A_NAME}.${gname} PROPERTIES LABELS "${A_LABELS}" TIMEOUT ${A_TIMEOUT})
  endforeach()
  set(discover_filter "*")
  if(grouped)
    list(JOIN grouped ":" negative)
    set(discover_filter "*-${negative}")
  endif()
  foreach(variant ${A_VARIANTS})
    set(prefix "")
    set(env "")
    set(list_var "${A_NAME}_TESTS")
    if(NOT variant STREQUAL "_")
      string(REPLACE ":" ";" parts "${variant}")
      list(GET parts 0 vname)
      list(GET parts 1 env)
      set(prefix "${vname}.")
      set(list_var "${A_NAME}_${vname}_TESTS")
    endif()
    gtest_discover_tests(${A_NAME}
      TEST_PREFIX "${prefix}"
      TEST_LIST ${list_var}
      TEST_FILTER "${discover_filter}"
      PROPERTIES LABELS "${first_label}" TIMEOUT ${A_TIMEOUT} ENVIRONMENT "${env}"
      DISCOVERY_TIMEOUT 60)
    list(LENGTH A_LABELS label_count)
    if(label_count GREATER 1)
      set(labels_script "${CMAKE_CURRENT_BINARY_DIR}/${list_var}_labels.cmake")
      file(WRITE "${labels_script}"
           "if(${list_var})\n"
           "  set_tests_properties(\${${list_var}} PROPERTIES LABELS \"${A_LABELS}\")\n"
           "endif()\n")
      set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_script}")
    endif()
  endforeach()
endfunction()
