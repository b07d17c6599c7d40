/* Compile-time check that pv_segment_t matches the ctypes layout pvfalcon 2.0.1's binding declares
 * (c_float, c_float, c_int32). */
#include <stddef.h>
#include "pv_falcon_abi.h"

_Static_assert(sizeof(pv_segment_t) == 12, "pv_segment_t size");
_Static_assert(offsetof(pv_segment_t, end_sec) == 4, "pv_segment_t end_sec");
_Static_assert(offsetof(pv_segment_t, speaker_tag) == 8, "pv_segment_t speaker_tag");
