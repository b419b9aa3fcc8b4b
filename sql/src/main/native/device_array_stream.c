// The Arrow C Device Data Interface's stream (ArrowDeviceArrayStream) for gpudf: the C function
// pointers a stream is made of, which Java 17 cannot make itself. Export: a stream whose callbacks
// call a Java source object (DeviceArrayStreams.Source: int schema(long), int next(long),
// String error(), void close()). Import: Java calls a producer's callbacks through these entry
// points. Everything else (schemas, arrays, checks) is done in Java.
#include <errno.h>
#include <jni.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ArrowSchema;
struct ArrowDeviceArray;

struct ArrowDeviceArrayStream {
  int32_t device_type;
  int (*get_schema)(struct ArrowDeviceArrayStream*, struct ArrowSchema*);
  int (*get_next)(struct ArrowDeviceArrayStream*, struct ArrowDeviceArray*);
  const char* (*get_last_error)(struct ArrowDeviceArrayStream*);
  void (*release)(struct ArrowDeviceArrayStream*);
  void* private_data;
};

// an exported stream's state: the VM, a global reference to its Java source, the last error
struct exported {
  JavaVM* vm;
  jobject source;
  jmethodID schema, next, error, close;
  char* last_error;
};

// the calling thread's JNIEnv: a consumer may call from a thread the JVM has not seen (attached as a daemon)
static JNIEnv* env_of(JavaVM* vm) {
  JNIEnv* env = NULL;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_8) == JNI_EDETACHED &&
      (*vm)->AttachCurrentThreadAsDaemon(vm, (void**)&env, NULL) != JNI_OK) {
    return NULL;
  }
  return env;
}

static void keep_error(JNIEnv* env, struct exported* p, const char* fallback) {
  free(p->last_error);
  p->last_error = NULL;
  jstring message = (jstring)(*env)->CallObjectMethod(env, p->source, p->error);
  if ((*env)->ExceptionCheck(env)) {
    (*env)->ExceptionClear(env);
    message = NULL;
  }
  if (message != NULL) {
    const char* chars = (*env)->GetStringUTFChars(env, message, NULL);
    if (chars != NULL) {
      p->last_error = strdup(chars);
      (*env)->ReleaseStringUTFChars(env, message, chars);
    }
    (*env)->DeleteLocalRef(env, message);
  }
  if (p->last_error == NULL) p->last_error = strdup(fallback);
}

// calls source.<method>(address): 0, or an errno the Java side chose (its message kept for get_last_error)
static int call(struct ArrowDeviceArrayStream* s, jmethodID method, void* out) {
  struct exported* p = s->private_data;
  JNIEnv* env = env_of(p->vm);
  if (env == NULL) return EIO;
  jint rc = (*env)->CallIntMethod(env, p->source, method, (jlong)(uintptr_t)out);
  if ((*env)->ExceptionCheck(env)) {
    // the source catches what it throws: this is the JVM failing (out of memory, say)
    (*env)->ExceptionClear(env);
    rc = EIO;
  }
  if (rc != 0) keep_error(env, p, "gpudf's device array stream failed");
  return rc;
}

static int get_schema(struct ArrowDeviceArrayStream* s, struct ArrowSchema* out) {
  return call(s, ((struct exported*)s->private_data)->schema, out);
}

static int get_next(struct ArrowDeviceArrayStream* s, struct ArrowDeviceArray* out) {
  return call(s, ((struct exported*)s->private_data)->next, out);
}

static const char* get_last_error(struct ArrowDeviceArrayStream* s) {
  return ((struct exported*)s->private_data)->last_error;
}

static void release(struct ArrowDeviceArrayStream* s) {
  struct exported* p = s->private_data;
  JNIEnv* env = env_of(p->vm);
  if (env != NULL) {
    (*env)->CallVoidMethod(env, p->source, p->close);
    // the source logs what its close throws; only the JVM failing gets here, and a release cannot fail
    if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
    (*env)->DeleteGlobalRef(env, p->source);
  }
  free(p->last_error);
  free(p);
  s->release = NULL;
  s->private_data = NULL;
}

JNIEXPORT void JNICALL Java_dev_gpudf_sql_interop_StreamNative_export(JNIEnv* env, jclass cls, jlong stream, jint device_type,
                                                                       jobject source) {
  struct exported* p = calloc(1, sizeof *p);
  if (p == NULL) {
    (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/OutOfMemoryError"), "a device array stream's state");
    return;
  }
  jclass type = (*env)->GetObjectClass(env, source);
  p->schema = (*env)->GetMethodID(env, type, "schema", "(J)I");
  p->next = p->schema ? (*env)->GetMethodID(env, type, "next", "(J)I") : NULL;
  p->error = p->next ? (*env)->GetMethodID(env, type, "error", "()Ljava/lang/String;") : NULL;
  p->close = p->error ? (*env)->GetMethodID(env, type, "close", "()V") : NULL;
  if (p->close == NULL || (*env)->GetJavaVM(env, &p->vm) != JNI_OK) {
    free(p);
    return;  // NoSuchMethodError pending
  }
  p->source = (*env)->NewGlobalRef(env, source);
  struct ArrowDeviceArrayStream* s = (struct ArrowDeviceArrayStream*)(uintptr_t)stream;
  s->device_type = device_type;
  s->get_schema = get_schema;
  s->get_next = get_next;
  s->get_last_error = get_last_error;
  s->release = release;
  s->private_data = p;
}

// ---- a producer's stream, called from Java ----

static struct ArrowDeviceArrayStream* at(jlong stream) { return (struct ArrowDeviceArrayStream*)(uintptr_t)stream; }

JNIEXPORT jint JNICALL Java_dev_gpudf_sql_interop_StreamNative_getSchema(JNIEnv* env, jclass cls, jlong stream, jlong schema) {
  return at(stream)->get_schema(at(stream), (struct ArrowSchema*)(uintptr_t)schema);
}

JNIEXPORT jint JNICALL Java_dev_gpudf_sql_interop_StreamNative_getNext(JNIEnv* env, jclass cls, jlong stream, jlong array) {
  return at(stream)->get_next(at(stream), (struct ArrowDeviceArray*)(uintptr_t)array);
}

// the producer's last error as bytes (its text need not be valid modified UTF-8), at most 4 KiB; null if none
JNIEXPORT jbyteArray JNICALL Java_dev_gpudf_sql_interop_StreamNative_lastError(JNIEnv* env, jclass cls, jlong stream) {
  const char* e = at(stream)->get_last_error == NULL ? NULL : at(stream)->get_last_error(at(stream));
  if (e == NULL) return NULL;
  size_t n = strnlen(e, 4096);
  jbyteArray bytes = (*env)->NewByteArray(env, (jsize)n);
  if (bytes != NULL) (*env)->SetByteArrayRegion(env, bytes, 0, (jsize)n, (const jbyte*)e);
  return bytes;
}

JNIEXPORT void JNICALL Java_dev_gpudf_sql_interop_StreamNative_release(JNIEnv* env, jclass cls, jlong stream) {
  if (at(stream)->release != NULL) at(stream)->release(at(stream));
}
