#include "model/onnx_model.h"

#include <algorithm>
#include <cmath>

#include "backend/ops.h"
#include "io/atomic_file.h"
#include "core/run_control.h"
#include "io/onnx_converter_plugin.h"
#include "model/layer.h"
#include "model/param_storage.h"

namespace nnrt::model {

namespace {

// host.layer_shape: the layer's own config checks and shape rules.
nnrt_status layer_shape(void *, const char *type, const char *attributes_json, int32_t n_inputs,
                        const int64_t *const *in_dims, const int32_t *in_ranks, int64_t *out_dims, int32_t *out_rank,
                        char *message, size_t message_size) {
  return status_of(message, message_size, [&] {
    Json attrs = parse_json_object(attributes_json, "attributes");
    std::vector<Shape> in;
    for (int32_t i = 0; i < n_inputs; ++i) in.push_back(Shape::of(in_dims[i], in_ranks[i]));
    JsonReader reader(attrs, type);
    std::unique_ptr<Layer> layer = make_layer(type, reader);
    reader.finish();
    layer->name = type;
    layer->type = type;
    Shape out = layer->build(in);
    std::copy(out.dims.begin(), out.dims.begin() + out.rank, out_dims);
    *out_rank = out.rank;
  });
}

// host.read_param: a parameter's current value as floats.
nnrt_status read_param(void *self, const char *name, float *out, size_t count, char *message, size_t message_size) {
  return status_of(message, message_size, [&] {
    const Model &m = *static_cast<const Model *>(self);
    const Param *p = m.find_param(name);
    if (!p) fail(NNRT_ERR_INTERNAL, "no parameter ", name);
    if (static_cast<size_t>(p->value.numel()) != count) fail(NNRT_ERR_INTERNAL, name, " has ", p->value.numel(), " values, not ", count);
    Array f32 = ops::cast(m.ctx(), p->value, NNRT_DTYPE_F32);
    f32.copy_to_host(out, count * sizeof(float));
  });
}

nnrt_onnx_host make_host(const Model *m) {
  nnrt_onnx_host host{};
  host.struct_size = sizeof host;
  host.self = const_cast<Model *>(m);
  host.layer_shape = layer_shape;
  host.read_param = read_param;
  return host;
}

// A quantized layer's weight, which the converter hands over as floats: integers within the range
// the layer's kernels assume.
void write_int8_param(Context &ctx, const Param &p, const float *values, size_t count) {
  const int32_t bound = p.spec.max_abs > 0 ? p.spec.max_abs : 128;
  std::vector<int8_t> q(count);
  for (size_t i = 0; i < count; ++i) {
    const float v = values[i];
    if (!(v == std::nearbyint(v) && v >= -bound && v <= std::min(bound, 127))) {
      fail(NNRT_ERR_CORRUPT, "the ONNX weight of ", p.name, " holds ", v, " at element ", i, "; an int8 layer",
           p.spec.max_abs > 0 ? " with 7-bit weights" : "", " takes integers within [", -bound, ", ", std::min(bound, 127), "]");
    }
    q[i] = static_cast<int8_t>(v);
  }
  write_param(ctx, p.value, q.data(), q.size());
}

// Owns an import result of the converter.
struct ImportHandle {
  const nnrt_onnx_converter &conv;
  nnrt_onnx_import *result = nullptr;
  ~ImportHandle() {
    if (result) conv.import_free(result);
  }
};

std::shared_ptr<Model> import_onnx(const nnrt_onnx_converter &conv, std::shared_ptr<Context> ctx, const char *path,
                                   const void *data, size_t nbytes, const Json &options) {
  nnrt_onnx_host host = make_host(nullptr);
  char message[NNRT_ONNX_MESSAGE_SIZE] = "";
  ImportHandle import{conv};
  std::string options_text = options.dump();
  // A call with run options may stop between these stages (core/run_control.h).
  check_run();
  nnrt_status st = conv.import_model(&host, path, data, nbytes, options_text.c_str(), &import.result, message, sizeof message);
  if (st != NNRT_OK) fail(st, message);
  check_run();

  std::shared_ptr<Model> m = Model::create(ctx, Json::parse(conv.import_config(import.result)));
  // The ONNX weights into the built model's parameters, each freed once copied.
  for (size_t i = 0, n = conv.import_param_count(import.result); i < n; ++i) {
    check_run();
    const char *name = nullptr;
    const float *values = nullptr;
    size_t count = 0;
    st = conv.import_param(import.result, i, &name, &values, &count, message, sizeof message);
    if (st != NNRT_OK) fail(st, message);
    Param *p = nullptr;
    for (Param &q : m->params())
      if (q.name == name) p = &q;
    if (p) {  // else a layer that dropped it (a dense merged into an output layer keeps both)
      if (static_cast<int64_t>(count) != p->value.numel()) {
        fail(NNRT_ERR_CORRUPT, "the ONNX tensor for ", name, " has ", count, " elements, but ", name, " is ",
             to_string(p->value.shape()));
      }
      if (p->spec.dtype == NNRT_DTYPE_I8) {
        write_int8_param(m->ctx(), *p, values, count);
      } else {
        write_param(m->ctx(), p->value, values, count * sizeof(float));
      }
    }
    conv.import_release_param(import.result, i);
  }
  return m;
}

// The model as the converter's export description (nnrt/onnx_converter.h).
Json describe_for_export(const Model &m) {
  m.require_one_input("ONNX export");
  Json d;
  d["input"] = m.input_shapes()[0].vec();
  d["output"] = m.output_node();
  Json nodes = Json::array();
  for (const Node &n : m.nodes()) {
    if (n.layer->attributes.contains("int8")) {
      fail(NNRT_ERR_UNSUPPORTED, n.layer->where(),
           " is quantized to int8, which has no ONNX export here: export the float model it was quantized from");
    }
    Json j;
    j["type"] = n.layer->type;
    j["name"] = n.layer->name;
    j["where"] = n.layer->where();
    j["attributes"] = n.layer->attributes;
    j["inputs"] = n.inputs;
    j["out_shape"] = n.out_shape.vec();
    nodes.push_back(std::move(j));
  }
  d["nodes"] = std::move(nodes);
  Json params = Json::object();
  for (const Param &p : m.params()) params[p.name] = p.value.shape().vec();
  d["params"] = std::move(params);
  return d;
}

}  // namespace

std::shared_ptr<Model> import_onnx_file(std::shared_ptr<Context> ctx, const std::string &path, const Json &options) {
  return import_onnx(io::onnx_converter(), std::move(ctx), path.c_str(), nullptr, 0, options);
}

std::shared_ptr<Model> import_onnx_memory(std::shared_ptr<Context> ctx, const void *data, size_t nbytes,
                                          const Json &options) {
  return import_onnx(io::onnx_converter(), std::move(ctx), nullptr, data ? data : "", nbytes, options);
}

std::shared_ptr<Model> import_onnx_memory_with(const nnrt_onnx_converter &converter, std::shared_ptr<Context> ctx,
                                               const void *data, size_t nbytes, const Json &options) {
  return import_onnx(converter, std::move(ctx), nullptr, data ? data : "", nbytes, options);
}

void export_onnx(const Model &m, const std::string &path) {
  const nnrt_onnx_converter &conv = io::onnx_converter();
  void *bytes = nullptr;
  size_t nbytes = 0;
  {
    std::shared_lock<WriterPreferringSharedMutex> read(m.lock());
    std::string description = describe_for_export(m).dump();
    nnrt_onnx_host host = make_host(&m);
    char message[NNRT_ONNX_MESSAGE_SIZE] = "";
    nnrt_status st = conv.export_model(&host, description.c_str(), &bytes, &nbytes, message, sizeof message);
    if (st != NNRT_OK) fail(st, message);
  }
  std::unique_ptr<void, void (*)(void *)> owned(bytes, conv.free_bytes);
  io::write_file_atomically(path, {{bytes, nbytes}});
}

}  // namespace nnrt::model
