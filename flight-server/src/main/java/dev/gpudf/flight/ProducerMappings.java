package dev.gpudf.flight;

import dev.gpudf.columnar.cuda.CudaDevice;
import dev.gpudf.columnar.cuda.DeviceIpc;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The producers' allocations this server has mapped, by IPC handle: every import opens its
 * mappings here, so that one handle is mapped once however many imports use it at a time, and a
 * producer may ask for a mapping to be kept between imports ({@code keep_mapped}). Mapping a large
 * allocation costs the driver far more than copying it (about 22 ms for 2.4 GB on an H200,
 * against a 1.8 ms copy), so a producer that ingests from the same memory again and again (a
 * training loop writing predictions into one buffer) keeps it mapped and pays the copy alone.
 *
 * <p>A kept mapping is the producer's promise: it keeps the allocation alive until it sends
 * {@link DeviceHandOff#UNMAP} for it (the Python client holds a reference to one array in each
 * kept allocation, and unmaps when its connection closes), because freeing exported memory that
 * another process still maps is undefined. A kept mapping gives no access the handle did not:
 * every import copies the bytes again and checks the copy. At most {@link #MOST_KEPT} are kept;
 * the server unmaps all of them when it closes. Thread-safe; owned by the producer, which closes it.
 */
final class ProducerMappings implements AutoCloseable {
  /** The most mappings kept between imports at once, all producers together. */
  static final int MOST_KEPT = 1024;
  private final Map<String, Entry> open = new HashMap<>();
  private int kept;
  private boolean closed;

  /** One mapped allocation: the size its producer stated, the imports using it now, and whether it is kept after them. */
  private static final class Entry {
    final DeviceIpc.Mapping mapping;
    final long statedSize;
    int users;
    boolean kept;

    Entry(DeviceIpc.Mapping mapping, long statedSize) {
      this.mapping = mapping;
      this.statedSize = statedSize;
    }
  }

  /** The mappings one import uses, taken from {@link #acquire}: give them back with {@link #release}. */
  static final class Use {
    final List<DeviceIpc.Mapping> mappings = new ArrayList<>();
    private final List<String> keys = new ArrayList<>();
    private final List<String> newlyKept = new ArrayList<>();
    /** How many of the mappings this import opened, and how many it found open. */
    int opened;
    int reused;
  }

  /**
   * Maps {@code handle} (an allocation said to hold {@code size} bytes) for {@code use}: the open
   * mapping of the same handle if there is one (the stated size must then be the same), else a new
   * one; kept after the import when {@code keep}. More than {@link #MOST_KEPT} kept is a {@link UserException}.
   */
  synchronized void acquire(CudaDevice device, byte[] handle, long size, boolean keep, Use use) {
    if (closed) {
      throw new IllegalStateException("the server is closing");
    }
    String key = Base64.getEncoder().encodeToString(handle);
    Entry e = open.get(key);
    if (keep && (e == null || !e.kept) && kept >= MOST_KEPT) {
      throw new UserException("this server keeps at most " + MOST_KEPT + " producer allocations mapped; "
          + DeviceHandOff.UNMAP + " some, or import without keep_mapped");
    }
    if (e == null) {
      // the driver maps each handle once a process: imports sharing it share the mapping
      e = new Entry(DeviceIpc.open(device, handle, size), size);
      open.put(key, e);
      use.opened++;
    } else if (e.statedSize != size) {
      throw new UserException("an allocation mapped here as " + e.statedSize + " bytes is now said to hold " + size);
    } else {
      use.reused++;
    }
    e.users++;
    use.keys.add(key);
    use.mappings.add(e.mapping);
    if (keep && !e.kept) {
      e.kept = true;
      kept++;
      use.newlyKept.add(key);
    }
  }

  /**
   * Ends {@code use}: each mapping no other import uses and nobody keeps is unmapped. With {@code
   * failed}, the mappings this import asked to keep are not kept (its producer cannot count on them).
   */
  synchronized void release(Use use, boolean failed) {
    if (failed) {
      for (String key : use.newlyKept) {
        Entry e = open.get(key);
        e.kept = false;
        kept--;
      }
    }
    for (String key : use.keys) {
      Entry e = open.get(key);
      e.users--;
      closeIfUnused(key, e);
    }
  }

  /** Stops keeping the allocations of {@code handles} (base64, as imports name them); returns how many were kept. */
  synchronized int unmap(List<String> handles) {
    int unmapped = 0;
    for (String h : handles) {
      byte[] handle;
      try {
        handle = Base64.getDecoder().decode(h);
      } catch (IllegalArgumentException e) {
        throw new UserException("an unmap names handle '" + abbreviate(h) + "', which is not base64", e);
      }
      String key = Base64.getEncoder().encodeToString(handle);
      Entry e = open.get(key);
      if (e != null && e.kept) {
        e.kept = false;
        kept--;
        unmapped++;
        closeIfUnused(key, e);
      }
    }
    return unmapped;
  }

  /** How many mappings are kept between imports now. */
  synchronized int kept() {
    return kept;
  }

  private void closeIfUnused(String key, Entry e) {
    if (e.users == 0 && !e.kept) {
      open.remove(key);
      e.mapping.close();
    }
  }

  private static String abbreviate(String s) {
    return s.length() <= 16 ? s : s.substring(0, 16) + "...";
  }

  /** Unmaps every mapping: the server is closing, and no import runs any more. */
  @Override
  public synchronized void close() {
    closed = true;
    RuntimeException first = null;
    for (Entry e : open.values()) {
      try {
        e.mapping.close();
      } catch (RuntimeException x) {
        if (first == null) {
          first = x;
        } else {
          first.addSuppressed(x);
        }
      }
    }
    open.clear();
    kept = 0;
    if (first != null) {
      throw first;
    }
  }
}
