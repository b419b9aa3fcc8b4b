// A native peer of gpudf's Arrow C Device Data Interface (ArrowDeviceArray), for the tests of
// dev.gpudf.sql.interop.DeviceArrays: a consumer that walks an exported record batch's C structs,
// reads each buffer from the device itself (CUDA driver API, loaded at run time) and sums it, and
// a producer that makes a batch in device memory of its own, with a release callback that frees
// it; and streams (ArrowDeviceArrayStream) of both. Plain C over the structs the Arrow specification defines; JNI entry points for the test
// class NativePeer.
#include <dlfcn.h>
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- the Arrow C data and device interfaces, as the specification defines them ----
struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};

#define ARROW_DEVICE_CUDA 2
struct ArrowDeviceArray {
  struct ArrowArray array;
  int64_t device_id;
  int32_t device_type;
  void* sync_event;
  int64_t reserved[3];
};

struct ArrowDeviceArrayStream {
  int32_t device_type;
  int (*get_schema)(struct ArrowDeviceArrayStream*, struct ArrowSchema*);
  int (*get_next)(struct ArrowDeviceArrayStream*, struct ArrowDeviceArray*);
  const char* (*get_last_error)(struct ArrowDeviceArrayStream*);
  void (*release)(struct ArrowDeviceArrayStream*);
  void* private_data;
};

// ---- the few CUDA driver calls used, bound at run time (no CUDA headers needed to build) ----
typedef unsigned long long CUdeviceptr;
typedef void* CUcontext;
static int (*cuMemAlloc)(CUdeviceptr*, size_t);
static int (*cuMemFree)(CUdeviceptr);
static int (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
static int (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
static int (*cuCtxGetCurrent)(CUcontext*);
static int (*cuCtxPushCurrent)(CUcontext);
static int (*cuCtxPopCurrent)(CUcontext*);

static int bind_cuda(void) {
  static int bound = 0;
  if (bound) return 1;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (lib == NULL) return 0;
  cuMemAlloc = (int (*)(CUdeviceptr*, size_t))dlsym(lib, "cuMemAlloc_v2");
  cuMemFree = (int (*)(CUdeviceptr))dlsym(lib, "cuMemFree_v2");
  cuMemcpyHtoD = (int (*)(CUdeviceptr, const void*, size_t))dlsym(lib, "cuMemcpyHtoD_v2");
  cuMemcpyDtoH = (int (*)(void*, CUdeviceptr, size_t))dlsym(lib, "cuMemcpyDtoH_v2");
  cuCtxGetCurrent = (int (*)(CUcontext*))dlsym(lib, "cuCtxGetCurrent");
  cuCtxPushCurrent = (int (*)(CUcontext))dlsym(lib, "cuCtxPushCurrent_v2");
  cuCtxPopCurrent = (int (*)(CUcontext*))dlsym(lib, "cuCtxPopCurrent_v2");
  bound = cuMemAlloc && cuMemFree && cuMemcpyHtoD && cuMemcpyDtoH && cuCtxGetCurrent && cuCtxPushCurrent && cuCtxPopCurrent;
  return bound;
}

static void* from_device(const void* device, size_t bytes) {
  void* host = malloc(bytes ? bytes : 1);
  if (bytes && cuMemcpyDtoH(host, (CUdeviceptr)(uintptr_t)device, bytes) != 0) {
    free(host);
    return NULL;
  }
  return host;
}

static int valid(const uint8_t* bitmap, int64_t i) { return bitmap == NULL || (bitmap[i >> 3] >> (i & 7)) & 1; }

// Appends to `out` one column's figures: NULLs, and a sum of its valid values (integers and
// decimal64 as integers, floats as doubles, strings as their bytes and an FNV-1a hash, bools as trues).
static int describe(const struct ArrowSchema* s, const struct ArrowArray* a, char* out, size_t room) {
  int64_t n = a->length, off = a->offset;
  uint8_t* validity = a->buffers[0] ? from_device(a->buffers[0], (size_t)((n + off + 7) / 8)) : NULL;
  const char* f = s->format;
  char figures[256];
  if (!strcmp(f, "u")) {
    int32_t* offsets = from_device(a->buffers[1], (size_t)(n + off + 1) * 4);
    size_t bytes = (size_t)offsets[n + off];
    uint8_t* chars = from_device(a->buffers[2], bytes);
    uint64_t hash = 14695981039346656037ULL, total = 0;
    for (int64_t i = off; i < n + off; i++) {
      if (!valid(validity, i)) continue;
      for (int32_t k = offsets[i]; k < offsets[i + 1]; k++) hash = (hash ^ chars[k]) * 1099511628211ULL;
      total += (uint64_t)(offsets[i + 1] - offsets[i]);
    }
    snprintf(figures, sizeof figures, "bytes=%llu fnv=%llu", (unsigned long long)total, (unsigned long long)hash);
    free(offsets);
    free(chars);
  } else if (!strcmp(f, "b")) {
    uint8_t* bits = from_device(a->buffers[1], (size_t)((n + off + 7) / 8));
    int64_t trues = 0;
    for (int64_t i = off; i < n + off; i++) trues += valid(validity, i) && valid(bits, i) ? 1 : 0;
    snprintf(figures, sizeof figures, "trues=%lld", (long long)trues);
    free(bits);
  } else if (!strcmp(f, "g") || !strcmp(f, "f")) {
    int width = f[0] == 'g' ? 8 : 4;
    uint8_t* values = from_device(a->buffers[1], (size_t)(n + off) * width);
    double sum = 0;
    for (int64_t i = off; i < n + off; i++) {
      if (valid(validity, i)) sum += width == 8 ? ((double*)values)[i] : ((float*)values)[i];
    }
    uint64_t sum_bits;
    memcpy(&sum_bits, &sum, sizeof sum_bits);
    snprintf(figures, sizeof figures, "bits=%016llx", (unsigned long long)sum_bits);
    free(values);
  } else {
    int width = !strcmp(f, "c") ? 1 : !strcmp(f, "s") ? 2 : (!strcmp(f, "i") || !strcmp(f, "tdD")) ? 4 : 8;
    if (f[0] == 'd' && strstr(f, ",64") == NULL) {
      snprintf(out + strlen(out), room - strlen(out), " | %s %s: not summed", s->name, f);
      free(validity);
      return 1;
    }
    uint8_t* values = from_device(a->buffers[1], (size_t)(n + off) * width);
    long long sum = 0;
    for (int64_t i = off; i < n + off; i++) {
      if (!valid(validity, i)) continue;
      sum += width == 1 ? ((int8_t*)values)[i] : width == 2 ? ((int16_t*)values)[i] : width == 4 ? ((int32_t*)values)[i]
                                                                                               : ((int64_t*)values)[i];
    }
    snprintf(figures, sizeof figures, "sum=%lld", sum);
    free(values);
  }
  snprintf(out + strlen(out), room - strlen(out), " | %s %s nulls=%lld %s", s->name, f, (long long)a->null_count, figures);
  free(validity);
  return 1;
}

// What a batch holds, read from the device here, appended to out; releases the batch (not the schema).
static void describe_batch(struct ArrowDeviceArray* d, struct ArrowSchema* s, char* out, size_t room) {
  snprintf(out + strlen(out), room - strlen(out), "device_type=%d device_id=%lld sync_event=%s rows=%lld format=%s",
           d->device_type, (long long)d->device_id, d->sync_event ? "set" : "null", (long long)d->array.length, s->format);
  for (int64_t c = 0; c < d->array.n_children; c++) describe(s->children[c], d->array.children[c], out, room);
  d->array.release(&d->array);
  snprintf(out + strlen(out), room - strlen(out), " | released=%s", d->array.release == NULL ? "yes" : "no");
}

// The consumer: what an exported batch holds, read from the device here; releases the batch and its schema.
JNIEXPORT jstring JNICALL Java_dev_gpudf_sql_interop_NativePeer_consume(JNIEnv* env, jclass cls, jlong device_array,
                                                                         jlong schema) {
  static char out[8192];
  struct ArrowSchema* s = (struct ArrowSchema*)(uintptr_t)schema;
  if (!bind_cuda()) return (*env)->NewStringUTF(env, "no libcuda");
  out[0] = 0;
  describe_batch((struct ArrowDeviceArray*)(uintptr_t)device_array, s, out, sizeof out);
  s->release(s);
  return (*env)->NewStringUTF(env, out);
}

// The stream consumer: every batch of an exported ArrowDeviceArrayStream described as consume
// describes one, joined by " || ", then "end" (or "error <errno>: <message>"); releases the stream.
JNIEXPORT jstring JNICALL Java_dev_gpudf_sql_interop_NativePeer_consumeStream(JNIEnv* env, jclass cls, jlong stream) {
  static char out[65536];
  struct ArrowDeviceArrayStream* st = (struct ArrowDeviceArrayStream*)(uintptr_t)stream;
  if (!bind_cuda()) return (*env)->NewStringUTF(env, "no libcuda");
  snprintf(out, sizeof out, "stream device_type=%d", st->device_type);
  struct ArrowSchema schema;
  int rc = st->get_schema(st, &schema);
  int have_schema = rc == 0;
  for (int batch = 0; rc == 0; batch++) {
    struct ArrowDeviceArray d;
    memset(&d, 0, sizeof d);
    rc = st->get_next(st, &d);
    if (rc != 0 || d.array.release == NULL) break;
    strncat(out, " || ", sizeof out - strlen(out) - 1);
    describe_batch(&d, &schema, out, sizeof out);
  }
  if (have_schema) schema.release(&schema);
  if (rc == 0) {
    strncat(out, " || end", sizeof out - strlen(out) - 1);
  } else {
    const char* e = st->get_last_error(st);
    snprintf(out + strlen(out), sizeof out - strlen(out), " || error %d: %s", rc, e ? e : "(none)");
  }
  st->release(st);
  snprintf(out + strlen(out), sizeof out - strlen(out), " | stream released=%s", st->release == NULL ? "yes" : "no");
  return (*env)->NewStringUTF(env, out);
}

// ---- the producer ----
#define COLUMNS 4
static const char* NAMES[COLUMNS] = {"id", "x", "s", "price"};
static const char* FORMATS[COLUMNS] = {"l", "g", "u", "d:10,2,64"};
static long long produced_bytes_live = 0;

struct produced {
  CUcontext context;
  CUdeviceptr device[COLUMNS][3];
  size_t sizes[COLUMNS][3];
  const void* buffers[COLUMNS][3];
  struct ArrowArray child_arrays[COLUMNS];
  struct ArrowArray* children[COLUMNS];
  const void* top_buffers[1];
};

static void release_child(struct ArrowArray* a) { a->release = NULL; }

static void release_batch(struct ArrowArray* a) {
  struct produced* p = a->private_data;
  CUcontext ignored;
  cuCtxPushCurrent(p->context);
  for (int c = 0; c < COLUMNS; c++) {
    for (int b = 0; b < 3; b++) {
      if (p->device[c][b]) {
        cuMemFree(p->device[c][b]);
        produced_bytes_live -= (long long)p->sizes[c][b];
      }
    }
  }
  cuCtxPopCurrent(&ignored);
  free(p);
  a->release = NULL;
}

static void release_schema(struct ArrowSchema* s) {
  for (int64_t c = 0; c < s->n_children; c++) free(s->children[c]);
  free(s->children);
  s->release = NULL;
}

static CUdeviceptr upload(struct produced* p, int c, int b, const void* host, size_t bytes) {
  CUdeviceptr d = 0;
  if (cuMemAlloc(&d, bytes ? bytes : 1) != 0) return 0;
  if (bytes) cuMemcpyHtoD(d, host, bytes);
  p->device[c][b] = d;
  p->sizes[c][b] = bytes ? bytes : 1;
  produced_bytes_live += (long long)p->sizes[c][b];
  return d;
}

// Fills *out (an ArrowDeviceArray) and *schema_out with `rows` rows in cuMemAlloc'd memory: id =
// row, x = row / 2, s = "r<row>" or "é<row>" (every 3rd) and NULL every 5th row, price = row * 3
// hundredths in DECIMAL(10, 2) as decimal64. Returns 0, or -1 without a CUDA driver.
JNIEXPORT jint JNICALL Java_dev_gpudf_sql_interop_NativePeer_produce(JNIEnv* env, jclass cls, jlong rows, jlong out,
                                                                     jlong schema_out) {
  if (!bind_cuda()) return -1;
  struct produced* p = calloc(1, sizeof *p);
  cuCtxGetCurrent(&p->context);
  int64_t n = rows;
  int64_t* id = malloc((size_t)(n ? n : 1) * 8);
  double* x = malloc((size_t)(n ? n : 1) * 8);
  int64_t* price = malloc((size_t)(n ? n : 1) * 8);
  int32_t* offsets = malloc((size_t)(n + 1) * 4);
  char* chars = malloc((size_t)(n ? n : 1) * 24);
  uint8_t* validity = calloc((size_t)((n + 7) / 8 + 1), 1);
  int64_t nulls = 0;
  offsets[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    id[i] = i;
    x[i] = (double)i / 2;
    price[i] = i * 3;
    int is_null = i % 5 == 4;
    nulls += is_null;
    if (!is_null) validity[i >> 3] |= (uint8_t)(1 << (i & 7));
    int len = is_null ? 0 : sprintf(chars + offsets[i], i % 3 == 0 ? "\xc3\xa9%lld" : "r%lld", (long long)i);
    offsets[i + 1] = offsets[i] + len;
  }
  const void* host[COLUMNS][3] = {{NULL, id, NULL}, {NULL, x, NULL}, {validity, offsets, chars}, {NULL, price, NULL}};
  size_t bytes[COLUMNS][3] = {{0, (size_t)n * 8, 0}, {0, (size_t)n * 8, 0}, {(size_t)(n + 7) / 8, (size_t)(n + 1) * 4,
                              (size_t)offsets[n]}, {0, (size_t)n * 8, 0}};
  int n_buffers[COLUMNS] = {2, 2, 3, 2};
  for (int c = 0; c < COLUMNS; c++) {
    for (int b = 0; b < n_buffers[c]; b++) {
      p->buffers[c][b] = host[c][b] == NULL ? NULL : (const void*)(uintptr_t)upload(p, c, b, host[c][b], bytes[c][b]);
    }
    struct ArrowArray* a = &p->child_arrays[c];
    a->length = n;
    a->null_count = c == 2 ? nulls : 0;
    a->offset = 0;
    a->n_buffers = n_buffers[c];
    a->n_children = 0;
    a->buffers = p->buffers[c];
    a->children = NULL;
    a->dictionary = NULL;
    a->release = release_child;
    a->private_data = NULL;
    p->children[c] = a;
  }
  free(id);
  free(x);
  free(price);
  free(offsets);
  free(chars);
  free(validity);
  struct ArrowDeviceArray* d = (struct ArrowDeviceArray*)(uintptr_t)out;
  memset(d, 0, sizeof *d);
  p->top_buffers[0] = NULL;
  d->array.length = n;
  d->array.null_count = 0;
  d->array.n_buffers = 1;
  d->array.n_children = COLUMNS;
  d->array.buffers = p->top_buffers;
  d->array.children = p->children;
  d->array.release = release_batch;
  d->array.private_data = p;
  d->device_id = 0;
  d->device_type = ARROW_DEVICE_CUDA;
  d->sync_event = NULL;
  struct ArrowSchema* s = (struct ArrowSchema*)(uintptr_t)schema_out;
  memset(s, 0, sizeof *s);
  s->format = "+s";
  s->name = "";
  s->n_children = COLUMNS;
  s->children = calloc(COLUMNS, sizeof(struct ArrowSchema*));
  for (int c = 0; c < COLUMNS; c++) {
    struct ArrowSchema* child = calloc(1, sizeof *child);
    child->format = FORMATS[c];
    child->name = NAMES[c];
    child->flags = 2;  // nullable
    child->release = release_schema;
    s->children[c] = child;
  }
  s->release = release_schema;
  return 0;
}

// Device bytes the producer holds now: 0 once every batch it made was released.
JNIEXPORT jlong JNICALL Java_dev_gpudf_sql_interop_NativePeer_producedBytesLive(JNIEnv* env, jclass cls) {
  return produced_bytes_live;
}

// ---- a producer's stream: `batches` batches of `rows` rows each, as produce makes them ----
struct produced_stream {
  jlong rows;
  int left;
  int fail_at;  // the batch whose get_next fails (EINVAL), 0 for none
  int next;
};

static int stream_schema(struct ArrowDeviceArrayStream* st, struct ArrowSchema* out) {
  struct ArrowDeviceArray scratch;
  int rc = Java_dev_gpudf_sql_interop_NativePeer_produce(NULL, NULL, 0, (jlong)(uintptr_t)&scratch, (jlong)(uintptr_t)out);
  if (rc == 0) scratch.array.release(&scratch.array);
  return rc == 0 ? 0 : 5;
}

static int stream_next(struct ArrowDeviceArrayStream* st, struct ArrowDeviceArray* out) {
  struct produced_stream* p = st->private_data;
  p->next++;
  if (p->fail_at == p->next) return 22;
  if (p->left == 0) {
    memset(out, 0, sizeof *out);
    return 0;
  }
  p->left--;
  struct ArrowSchema schema;
  if (Java_dev_gpudf_sql_interop_NativePeer_produce(NULL, NULL, p->rows, (jlong)(uintptr_t)out, (jlong)(uintptr_t)&schema)) {
    return 5;
  }
  schema.release(&schema);
  return 0;
}

static const char* stream_error(struct ArrowDeviceArrayStream* st) { return "the peer fails batch on purpose"; }

static int streams_live = 0;

static void stream_release(struct ArrowDeviceArrayStream* st) {
  free(st->private_data);
  st->release = NULL;
  streams_live--;
}

// Fills the ArrowDeviceArrayStream at `stream`: `batches` batches of `rows` rows in memory of its
// own, get_next of batch `fail_at` (from 1; 0: none) failing with EINVAL. Returns 0, or -1 without a driver.
JNIEXPORT jint JNICALL Java_dev_gpudf_sql_interop_NativePeer_produceStream(JNIEnv* env, jclass cls, jlong rows, jint batches,
                                                                           jint fail_at, jlong stream) {
  if (!bind_cuda()) return -1;
  struct produced_stream* p = calloc(1, sizeof *p);
  p->rows = rows;
  p->left = batches;
  p->fail_at = fail_at;
  struct ArrowDeviceArrayStream* st = (struct ArrowDeviceArrayStream*)(uintptr_t)stream;
  st->device_type = ARROW_DEVICE_CUDA;
  st->get_schema = stream_schema;
  st->get_next = stream_next;
  st->get_last_error = stream_error;
  st->release = stream_release;
  st->private_data = p;
  streams_live++;
  return 0;
}

// Streams the producer made and their consumers have not released.
JNIEXPORT jint JNICALL Java_dev_gpudf_sql_interop_NativePeer_streamsLive(JNIEnv* env, jclass cls) {
  return streams_live;
}
