/* Just enough of cuda_fp16.h / cuda_bf16.h for an export_to_c header (test_header.py). */
typedef struct { unsigned short x; } __half_raw;
typedef struct { unsigned short __x; } __nv_bfloat16;
