// grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo on the nghttp2 engine
// (h2_stream.h), answering as gRPC's reflection plugin does on the grpc++ engine: one response
// per request, at once (grpcurl keeps the stream open between requests), from protobuf's
// generated descriptor pool: list_services, file_by_filename, file_containing_symbol,
// file_containing_extension and all_extension_numbers_of_type. A file is sent as serialized
// FileDescriptorProtos, the file first and then every file it imports, transitively, each once
// per response. A lookup that finds nothing answers an error_response (NOT_FOUND) and the stream
// goes on. The messages are proto/chronoq/reflection/v1alpha/reflection.proto (the same field
// numbers as gRPC's; that file says why a copy).
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "chronoq/reflection/v1alpha/reflection.pb.h"
#include "grpc_api/h2_stream.h"

namespace chronoq::grpc_api {
namespace {

namespace pb = google::protobuf;
namespace rv = chronoq::reflection::v1alpha;

constexpr int kNotFound = 5;
constexpr int kUnimplemented = 12;
constexpr int kInvalidArgument = 3;

void Error(rv::ServerReflectionResponse* resp, int code, const char* message) {
  resp->mutable_error_response()->set_error_code(code);
  resp->mutable_error_response()->set_error_message(message);
}

// `file` and its imports, each not yet in `sent`.
void AddFile(const pb::FileDescriptor* file, std::unordered_set<std::string>* sent,
             rv::FileDescriptorResponse* out) {
  std::vector<const pb::FileDescriptor*> todo{file};
  while (!todo.empty()) {
    const pb::FileDescriptor* f = todo.back();
    todo.pop_back();
    if (!sent->insert(f->name()).second) continue;
    pb::FileDescriptorProto proto;
    f->CopyTo(&proto);
    proto.SerializeToString(out->add_file_descriptor_proto());
    for (int i = f->dependency_count() - 1; i >= 0; --i) todo.push_back(f->dependency(i));
  }
}

void Answer(const rv::ServerReflectionRequest& req, rv::ServerReflectionResponse* resp) {
  const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
  std::unordered_set<std::string> sent;
  resp->set_valid_host(req.host());
  *resp->mutable_original_request() = req;
  switch (req.message_request_case()) {
    case rv::ServerReflectionRequest::kListServices:
      for (const std::string& name : H2Services::Names()) {
        resp->mutable_list_services_response()->add_service()->set_name(name);
      }
      return;
    case rv::ServerReflectionRequest::kFileByFilename: {
      const pb::FileDescriptor* f = pool->FindFileByName(req.file_by_filename());
      if (f == nullptr) return Error(resp, kNotFound, "File not found.");
      return AddFile(f, &sent, resp->mutable_file_descriptor_response());
    }
    case rv::ServerReflectionRequest::kFileContainingSymbol: {
      const pb::FileDescriptor* f = pool->FindFileContainingSymbol(req.file_containing_symbol());
      if (f == nullptr) return Error(resp, kNotFound, "Symbol not found.");
      return AddFile(f, &sent, resp->mutable_file_descriptor_response());
    }
    case rv::ServerReflectionRequest::kFileContainingExtension: {
      const rv::ExtensionRequest& e = req.file_containing_extension();
      const pb::Descriptor* type = pool->FindMessageTypeByName(e.containing_type());
      if (type == nullptr) return Error(resp, kNotFound, "Type not found.");
      const pb::FieldDescriptor* ext = pool->FindExtensionByNumber(type, e.extension_number());
      if (ext == nullptr) return Error(resp, kNotFound, "Extension not found.");
      return AddFile(ext->file(), &sent, resp->mutable_file_descriptor_response());
    }
    case rv::ServerReflectionRequest::kAllExtensionNumbersOfType: {
      const pb::Descriptor* type = pool->FindMessageTypeByName(req.all_extension_numbers_of_type());
      if (type == nullptr) return Error(resp, kNotFound, "Type not found.");
      std::vector<const pb::FieldDescriptor*> exts;
      pool->FindAllExtensions(type, &exts);
      auto* out = resp->mutable_all_extension_numbers_response();
      out->set_base_type_name(type->full_name());
      for (const pb::FieldDescriptor* f : exts) out->add_extension_number(f->number());
      return;
    }
    case rv::ServerReflectionRequest::MESSAGE_REQUEST_NOT_SET:
      return Error(resp, kUnimplemented, "");
  }
}

class ReflectionCall final : public H2StreamHandler {
 public:
  explicit ReflectionCall(std::shared_ptr<H2StreamWriter> w) : w_(std::move(w)) {}

  void OnMessage(std::string_view bytes) override {
    if (w_ == nullptr) return;
    rv::ServerReflectionRequest req;
    if (!req.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      w_->Finish(kInvalidArgument, "the request cannot be parsed as a ServerReflectionRequest");
      w_.reset();
      return;
    }
    rv::ServerReflectionResponse resp;
    Answer(req, &resp);
    w_->Write(resp.SerializeAsString());
  }
  void OnHalfClose() override {
    if (w_ != nullptr) w_->Finish(0, {});
  }
  void OnClose() override { w_.reset(); }

 private:
  std::shared_ptr<H2StreamWriter> w_;
};

}  // namespace

std::unique_ptr<H2StreamHandler> NewReflectionHandler(std::shared_ptr<H2StreamWriter> w) {
  return std::make_unique<ReflectionCall>(std::move(w));
}

}  // namespace chronoq::grpc_api
