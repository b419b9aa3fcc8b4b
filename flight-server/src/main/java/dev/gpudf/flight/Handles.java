package dev.gpudf.flight;

import com.google.protobuf.ByteString;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.flight.CallStatus;

/**
 * The statement handles a server has given out, of one kind ({@code what}): each belongs to the
 * user who made it, and a lookup by anyone else finds nothing (as for a handle never made, so a
 * handle's existence is not told either); one idle longer than {@code gpudf.server.handleIdleSeconds}
 * (default 900) is dropped; a user holds at most {@code gpudf.server.maxHandlesPerUser} (default
 * 1,000) of a kind, past which making one is RESOURCE_EXHAUSTED. So clients that never close
 * their statements cannot fill the server's memory.
 */
final class Handles<T> {
  static final long IDLE_NANOS = Long.getLong("gpudf.server.handleIdleSeconds", 900) * 1_000_000_000L;
  static final int MAX_PER_USER = Integer.getInteger("gpudf.server.maxHandlesPerUser", 1_000);

  private record Entry<T>(String owner, T value, long lastUsed) {}

  private final Map<ByteString, Entry<T>> entries = new ConcurrentHashMap<>();
  private final String what;
  private final long idleNanos;
  private final int maxPerUser;

  /** Handles with the limits the system properties set. */
  Handles(String what) {
    this(what, IDLE_NANOS, MAX_PER_USER);
  }

  Handles(String what, long idleNanos, int maxPerUser) {
    this.what = what;
    this.idleNanos = idleNanos;
    this.maxPerUser = maxPerUser;
  }

  /** A new handle for {@code value}, owned by {@code owner}. */
  ByteString add(String owner, T value) {
    long now = System.nanoTime();
    entries.values().removeIf(e -> now - e.lastUsed() > idleNanos);
    long held = entries.values().stream().filter(e -> e.owner().equals(owner)).count();
    if (held >= maxPerUser) {
      throw CallStatus.RESOURCE_EXHAUSTED.withDescription("user '" + owner + "' holds " + held + " open " + what
          + "s, the most allowed (gpudf.server.maxHandlesPerUser): close some first").toRuntimeException();
    }
    ByteString handle = ByteString.copyFromUtf8(UUID.randomUUID().toString());
    entries.put(handle, new Entry<>(owner, value, now));
    return handle;
  }

  /** The value of {@code owner}'s {@code handle} (its idle time starts again), or null. */
  T get(String owner, ByteString handle) {
    Entry<T> e = entries.computeIfPresent(handle, (h, old) -> old.owner().equals(owner)
        ? new Entry<>(old.owner(), old.value(), System.nanoTime()) : old);
    return e != null && e.owner().equals(owner) ? e.value() : null;
  }

  /** Removes {@code owner}'s {@code handle}; returns its value, or null when it is not theirs or gone. */
  T remove(String owner, ByteString handle) {
    Entry<T> e = entries.get(handle);
    return e != null && e.owner().equals(owner) && entries.remove(handle, e) ? e.value() : null;
  }

  /** Drops every handle (the server is closing). */
  void clear() {
    entries.clear();
  }

  /** How many are held now. */
  int size() {
    return entries.size();
  }
}
