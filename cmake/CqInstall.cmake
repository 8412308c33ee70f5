# `make install PREFIX=...` (= cmake --install build --prefix PREFIX; DESTDIR honoured):
#   PREFIX/bin/chronoq
#   PREFIX/etc/chronoq/chronoq.toml          the sample config (/etc/chronoq when PREFIX is /usr);
#                                            an existing file is kept, never overwritten
#   PREFIX/lib/systemd/system/chronoq.service  with its /usr/local paths replaced by the prefix
install(TARGETS chronoq RUNTIME DESTINATION bin)

install(CODE "set(CQ_DEPLOY_DIR \"${PROJECT_SOURCE_DIR}/deploy\")
set(CQ_STAGING_DIR \"${PROJECT_BINARY_DIR}/install-staging\")")
install(CODE [[
  # The prefix is the one given at install time (cmake --install --prefix).
  set(cq_etc "${CMAKE_INSTALL_PREFIX}/etc")
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(cq_etc "/etc")
  endif()
  set(cq_conf "${cq_etc}/chronoq/chronoq.toml")
  if(EXISTS "$ENV{DESTDIR}${cq_conf}")
    message(STATUS "Keeping: $ENV{DESTDIR}${cq_conf} (the new sample is ${CQ_DEPLOY_DIR}/chronoq.toml)")
  else()
    file(INSTALL DESTINATION "${cq_etc}/chronoq" TYPE FILE FILES "${CQ_DEPLOY_DIR}/chronoq.toml")
  endif()

  file(READ "${CQ_DEPLOY_DIR}/systemd/chronoq.service" cq_unit)
  string(REPLACE "/usr/local/etc/" "${cq_etc}/" cq_unit "${cq_unit}")
  string(REPLACE "/usr/local/" "${CMAKE_INSTALL_PREFIX}/" cq_unit "${cq_unit}")
  file(WRITE "${CQ_STAGING_DIR}/chronoq.service" "${cq_unit}")
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system" TYPE FILE
       FILES "${CQ_STAGING_DIR}/chronoq.service")
]])
