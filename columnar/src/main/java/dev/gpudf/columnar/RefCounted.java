package dev.gpudf.columnar;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Base of every owning gpudf object. A new object holds one reference, owned by whoever created
 * it; {@link #retain()} adds one for another owner, and each owner calls {@link #close()} once.
 * The last close releases the resources; closing more often than retained throws, so double
 * frees surface as bugs instead of corrupting memory.
 */
public abstract class RefCounted implements AutoCloseable {
  private final AtomicInteger refs = new AtomicInteger(1);

  /** Adds a reference; the new owner must call {@link #close()}. Throws if already released. */
  public final void retain() {
    refs.updateAndGet(r -> {
      if (r <= 0) {
        throw new IllegalStateException(this + " was already released and cannot be retained");
      }
      return r + 1;
    });
  }

  /** Current number of owners; 0 once released. */
  public final int refCount() {
    return refs.get();
  }

  /** Drops one reference and releases the resources when it was the last. */
  @Override
  public final void close() {
    int r = refs.getAndUpdate(x -> x > 0 ? x - 1 : x);
    if (r <= 0) {
      throw new IllegalStateException(this + " closed more often than it was retained");
    }
    if (r == 1) {
      release();
    }
  }

  /** Throws unless the object still has an owner; use before touching its resources. */
  protected final void checkOpen() {
    if (refs.get() <= 0) {
      throw new IllegalStateException(this + " is closed");
    }
  }

  /** Frees what this object owns; called exactly once, by the last {@link #close()}. */
  protected abstract void release();
}
