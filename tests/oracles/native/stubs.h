/* What the recording stubs (stubs.c, compiled once per architecture) and a fixture's generated
   harness share.  The harness defines the per-fixture tables; stubs.c defines the rest. */
#pragma once
#include <stdint.h>

#define DEVICE_COUNT 2                  /* RuntimeConfig.device_count of the comparison */
#define CURRENT_DEVICE 0                /* RuntimeConfig.current_device */
#define NUM_FUNC_ATTRIBUTES 18          /* CUfunction_attribute 0-17 */
#define MAX_KERNELS 16

/* Defined by the generated harness, per fixture. */
extern const int gt_kernel_count;
extern const char *const gt_kernel_names[];
extern const int64_t gt_kernel_defaults[][NUM_FUNC_ATTRIBUTES];
struct gt_function { const char *name; const char *address; unsigned long size; };
extern const struct gt_function gt_object_functions[];
extern const int gt_object_function_count;

/* Defined in the generated runtime table (device attributes of the profile, with overrides). */
extern const int gt_device_attributes[][2];
extern const int gt_device_attribute_count;

/* Defined by stubs.c. */
extern const char *gt_current_entry;
extern int gt_current_device;
void gt_print_string(const char *text);                       /* a JSON string, or null */
const char *gt_caller_name(const void *return_address);       /* function+offset inside the object */
void gt_call_head(const char *symbol, const char *caller);    /* a call line up to its caller */
void gt_register_library(uint64_t handle, int64_t first_kernel);
void gt_parse_injection(const char *text);
const char *gt_enter(const char *entry);
void gt_leave(const char *saved, const char *args_json, long returned);
