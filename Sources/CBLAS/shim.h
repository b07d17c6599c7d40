// OpenBLAS's CBLAS interface (Debian libopenblas-dev: the header and openblas.pc live under
// /usr/include/x86_64-linux-gnu/openblas-pthread/, which pkg-config puts on the include path).
// Also declares openblas_set_num_threads, which SpeakerEmbedding uses to stay on one core.
#include <cblas.h>
