package dev.gpudf.flight;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resources held for a client under a lease id until it releases them or the lease expires; a
 * daemon thread closes expired ones twice a second. Closing the registry closes what it holds.
 */
final class Leases<T extends AutoCloseable> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Leases.class);

  private record Lease<T>(T value, long expiresNanos) {}

  private final Map<String, Lease<T>> held = new HashMap<>();
  private final ScheduledExecutorService reaper = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "gpudf-lease-reaper");
    t.setDaemon(true);
    return t;
  });

  Leases() {
    reaper.scheduleWithFixedDelay(() -> expire(System.nanoTime()), 500, 500, TimeUnit.MILLISECONDS);
  }

  /** Takes {@code value} under a new lease of {@code ttlSeconds} and returns its id. */
  synchronized String add(T value, double ttlSeconds) {
    String id = UUID.randomUUID().toString();
    held.put(id, new Lease<>(value, System.nanoTime() + (long) (ttlSeconds * 1e9)));
    return id;
  }

  /** Closes the value of lease {@code id}; false when there is no such lease. */
  boolean release(String id) {
    Lease<T> lease;
    synchronized (this) {
      lease = held.remove(id);
    }
    if (lease == null) {
      return false;
    }
    closeQuietlyLogged(id, lease.value());
    return true;
  }

  synchronized int size() {
    return held.size();
  }

  /** Closes every lease that expired by {@code nowNanos} ({@link System#nanoTime}); returns how many. */
  int expire(long nowNanos) {
    List<Map.Entry<String, Lease<T>>> due = new ArrayList<>();
    synchronized (this) {
      held.entrySet().removeIf(e -> {
        if (e.getValue().expiresNanos() - nowNanos <= 0) {
          due.add(Map.entry(e.getKey(), e.getValue()));
          return true;
        }
        return false;
      });
    }
    due.forEach(e -> closeQuietlyLogged(e.getKey(), e.getValue().value()));
    return due.size();
  }

  // a failure to free one lease must not stop the reaper or the others; it is logged, not lost
  private static void closeQuietlyLogged(String id, AutoCloseable value) {
    try {
      value.close();
    } catch (Exception e) {
      LOG.error("closing the resources of lease {} failed", id, e);
    }
  }

  @Override
  public void close() {
    reaper.shutdownNow();
    Map<String, Lease<T>> all;
    synchronized (this) {
      all = new HashMap<>(held);
      held.clear();
    }
    all.forEach((id, lease) -> closeQuietlyLogged(id, lease.value()));
  }
}
