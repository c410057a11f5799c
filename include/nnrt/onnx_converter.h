/* The ONNX converter plugin's ABI: what libnnrt and libnnrt-onnx.so say to each other.
 *
 * Parsing and writing ONNX needs protobuf, and libnnrt depends on nothing heavy (the C++ standard
 * library, zlib and libdl), so the converter is a plugin: libnnrt-onnx.so, found in the backend
 * plugin folders and loaded (dlopen) on the first import or export. This ABI is internal to one nnrt
 * build, not a public plugin interface: the core refuses a converter built from another nnrt version.
 * It is plain C so that no C++ object (an exception, a std::string, a JSON value) crosses it.
 *
 * Import: the converter parses the ModelProto and maps it onto an nnrt graph config (JSON text) plus
 * the parameters' values; the core builds the model from these as from any config. To know the shape
 * each ONNX node makes, the converter asks the core (nnrt_onnx_host.layer_shape), which runs the
 * layer's own shape rules: nnrt's layers are written once, in the core.
 *
 * Export: the core describes the model as JSON,
 *   {"input": [per-example dims], "output": <index of the output node>,
 *    "nodes": [{"type", "name", "where", "attributes": {...}, "inputs": [node indices, -1 for the
 *               model input], "out_shape": [per-example dims]}, ...],
 *    "params": {"<layer>.<suffix>": [dims], ...}}
 * and lends the parameters' values through nnrt_onnx_host.read_param; the converter returns the
 * serialised ModelProto.
 *
 * Errors: every function returns an nnrt_status and, when it is not NNRT_OK, has written a message
 * (NUL-terminated, truncated to fit) into the caller's buffer. Memory the converter returns is freed
 * by the converter's own functions.
 */
#ifndef NNRT_IO_ONNX_CONVERTER_H
#define NNRT_IO_ONNX_CONVERTER_H

#include <stddef.h>
#include <stdint.h>

#include "nnrt/nnrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNRT_ONNX_CONVERTER_ABI 1
/* The plugin's file name, in the backend plugin folders. */
#define NNRT_ONNX_CONVERTER_FILE "libnnrt-onnx.so"
/* The message buffers both sides pass. */
#define NNRT_ONNX_MESSAGE_SIZE 1024

/* What the core lends the converter during one call. */
typedef struct nnrt_onnx_host {
  size_t struct_size;
  void *self;
  /* The per-example output shape of an nnrt layer of `type` configured by `attributes_json` (the
   * node's config without type/name/inputs) reading `n_inputs` values of per-example shapes
   * in_dims[i][0..in_ranks[i]), written to out_dims (room for NNRT_MAX_DIMS) and *out_rank.
   * NNRT_ERR_INVALID_ARGUMENT for a config the layer refuses,
   * NNRT_ERR_SHAPE for inputs it cannot take. */
  nnrt_status (*layer_shape)(void *self, const char *type, const char *attributes_json, int32_t n_inputs,
                             const int64_t *const *in_dims, const int32_t *in_ranks, int64_t *out_dims,
                             int32_t *out_rank, char *message, size_t message_size);
  /* Export: copies the parameter `name` (as listed in the description) as `count` floats. */
  nnrt_status (*read_param)(void *self, const char *name, float *out, size_t count, char *message, size_t message_size);
} nnrt_onnx_host;

/* An import's result, owned by the converter. */
typedef struct nnrt_onnx_import nnrt_onnx_import;

typedef struct nnrt_onnx_converter {
  size_t struct_size;
  uint32_t abi;            /* NNRT_ONNX_CONVERTER_ABI */
  const char *version;     /* the nnrt version it was built from (NNRT_VERSION_STRING) */
  const char *description; /* e.g. "ONNX opsets 7-17, protobuf-lite 3.21.12" */

  /* Parses an ONNX model from the file `path` (data == NULL; external data is looked up beside it)
   * or from `data`/`nbytes` (path == NULL: no external data) and maps it onto nnrt. `options_json` is
   * the import options object (nnrt.h, nnrt_model_import_onnx). On NNRT_OK, *out holds the result. */
  nnrt_status (*import_model)(const nnrt_onnx_host *host, const char *path, const void *data, size_t nbytes,
                              const char *options_json, nnrt_onnx_import **out, char *message, size_t message_size);
  /* The graph config of the imported model (JSON text), valid until import_free. */
  const char *(*import_config)(const nnrt_onnx_import *result);
  /* The parameters: `name` is "<layer>.<suffix>" as the built model names it. */
  size_t (*import_param_count)(const nnrt_onnx_import *result);
  /* Parameter i as floats (converted from the ONNX element type when needed), valid until
   * import_release_param(i) or import_free. */
  nnrt_status (*import_param)(nnrt_onnx_import *result, size_t i, const char **name, const float **values,
                              size_t *count, char *message, size_t message_size);
  /* Frees parameter i's values once the core has copied them (the weights are held once). */
  void (*import_release_param)(nnrt_onnx_import *result, size_t i);
  void (*import_free)(nnrt_onnx_import *result);

  /* Writes the model described by `description_json` (see above) as a serialised ModelProto into
   * *bytes / *nbytes, to be freed with free_bytes. */
  nnrt_status (*export_model)(const nnrt_onnx_host *host, const char *description_json, void **bytes, size_t *nbytes,
                              char *message, size_t message_size);
  void (*free_bytes)(void *bytes);
} nnrt_onnx_converter;

/* The one symbol the plugin exports. NULL when `abi` is not one it speaks. */
typedef const nnrt_onnx_converter *(*nnrt_onnx_converter_entry_fn)(uint32_t abi);
#define NNRT_ONNX_CONVERTER_ENTRY "nnrt_onnx_converter_entry"

#ifdef __cplusplus
}
#endif

#endif /* NNRT_IO_ONNX_CONVERTER_H */
