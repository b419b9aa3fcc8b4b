package dev.gpudf.formats;

import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.QueryCancelledException;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.ObjIntConsumer;

/**
 * Waiting for every one of a set of reads on other threads: each writes into memory its caller
 * owns (pinned buffers), so none may still run when the caller frees it, whether a read failed or
 * the caller was interrupted.
 */
public final class Await {
  private Await() {}

  /**
   * Waits for all of {@code futures}, giving each result to {@code done} (with its index) as it
   * comes, the failed ones' too; then throws the first failure (the others suppressed in it), or
   * a {@link QueryCancelledException} when interrupted meanwhile (the interrupt kept). {@code what}
   * names the work in errors.
   */
  public static <T> void all(List<? extends Future<T>> futures, String what, ObjIntConsumer<T> done) {
    RuntimeException failed = null;
    boolean interrupted = false;
    for (int i = 0; i < futures.size(); i++) {
      while (true) {
        try {
          done.accept(futures.get(i).get(), i);
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          RuntimeException r = e.getCause() instanceof RuntimeException x ? x
              : new InternalException(what + " failed: " + e.getCause(), e.getCause());
          if (failed == null) {
            failed = r;
          } else {
            failed.addSuppressed(r);
          }
          break;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
      if (failed == null) {
        failed = new QueryCancelledException("interrupted while " + what, false);
      }
    }
    if (failed != null) {
      throw failed;
    }
  }
}
