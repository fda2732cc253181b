/* smla C ABI: the C++ API of smla/ops.hpp for FFI. Plain C structs, no exceptions; every
 * call returns a status code, and smla_last_error() holds the message of the last failed
 * call on this thread. Layouts mirror the C++ types; strides are in elements. */
#ifndef SMLA_SMLA_H_
#define SMLA_SMLA_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SMLA_MAX_RANK 4

typedef enum smla_status_code {
  SMLA_OK = 0,
  SMLA_INVALID_ARGUMENT = 1,
  SMLA_NOT_BUILT = 2,
  SMLA_UNSUPPORTED = 3,
  SMLA_CUDA_ERROR = 4,
  SMLA_INTERNAL = 5
} smla_status_code;

typedef enum smla_dtype {
  SMLA_BF16 = 0,
  SMLA_F32 = 1,
  SMLA_I32 = 2,
  SMLA_U8 = 3,
  SMLA_I8 = 4
} smla_dtype;

typedef enum smla_device_kind { SMLA_CPU = 0, SMLA_CUDA = 1 } smla_device_kind;

typedef enum smla_format {
  SMLA_FORMAT_BF16 = 0,
  SMLA_FORMAT_FP8_V32 = 1,
  SMLA_FORMAT_FP8_DS_MLA = 2,
  SMLA_FORMAT_INT8_DS_MLA = 3
} smla_format;

/* A non-owning strided view; rank 0 means "absent" (optional arguments), a negative rank is
   an invalid argument. */
typedef struct smla_tensor {
  void* data;
  smla_dtype dtype;
  int32_t rank;
  int64_t shape[SMLA_MAX_RANK];
  int64_t stride[SMLA_MAX_RANK]; /* elements */
  smla_device_kind device_kind;
  int32_t device_index;
} smla_tensor;

/* A KV pool (SPEC §2); data == NULL and num_blocks == 0 means "absent". scales != NULL
 * selects the two-tensor int8_ds_mla layout. Strides in bytes. */
typedef struct smla_pool {
  smla_format format;
  void* data;
  int64_t num_blocks;
  int32_t block_size;
  int64_t block_stride;
  void* scales;
  int64_t scale_block_stride;
  smla_device_kind device_kind;
  int32_t device_index;
} smla_pool;

typedef struct smla_attend_args {
  smla_tensor q;             /* [T, h_q, d_qk] bf16 */
  smla_pool kv;              /* main pool */
  smla_tensor indices;       /* [T, k] i32 */
  smla_tensor lengths;       /* optional [T] i32 */
  smla_pool extra_kv;        /* optional */
  smla_tensor extra_indices; /* [T, k_x] i32 with extra_kv */
  smla_tensor extra_lengths; /* optional [T] i32 */
  smla_tensor sink;          /* optional [h_q] f32 */
  float scale;
  smla_tensor out;           /* [T, h_q, 512] bf16 */
  smla_tensor lse;           /* optional [T, h_q] f32 */
  smla_tensor max_logits;    /* optional [T, h_q] f32 */
} smla_attend_args;

typedef struct smla_plan {
  void* data;
  size_t bytes;
  uint64_t key;
  int32_t strategy;
} smla_plan;

typedef struct smla_combine_args {
  smla_tensor partial_out; /* [S, T, h_q, 512] f32 or bf16 */
  smla_tensor partial_lse; /* [S, T, h_q] f32 */
  smla_tensor sink;        /* optional [h_q] f32 */
  smla_tensor out;         /* [T, h_q, 512] bf16 */
  smla_tensor lse;         /* optional [T, h_q] f32 */
} smla_combine_args;

/* cudaStream_t, or NULL for the legacy default stream. */
typedef void* smla_stream;

const char* smla_last_error(void);
const char* smla_status_name(smla_status_code code);
const char* smla_version(void);

smla_status_code smla_plan_size(const smla_attend_args* args, size_t* bytes);
smla_status_code smla_make_plan(const smla_attend_args* args, smla_plan* plan,
                                smla_stream stream);
smla_status_code smla_attend_workspace_size(const smla_attend_args* args, size_t* bytes);
smla_status_code smla_attend(const smla_attend_args* args, void* workspace,
                             size_t workspace_bytes, smla_stream stream,
                             const smla_plan* plan /* may be NULL */);
smla_status_code smla_combine(const smla_combine_args* args, smla_stream stream);
smla_status_code smla_quantize(const smla_tensor* rows, const smla_pool* pool,
                               smla_stream stream);
smla_status_code smla_dequantize(const smla_pool* pool, const smla_tensor* rows,
                                 smla_stream stream);
smla_status_code smla_write_cache(const smla_tensor* rows, const smla_tensor* slots,
                                  const smla_pool* pool, smla_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* SMLA_SMLA_H_ */
