package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.error.GpuOutOfMemoryException;
import dev.gpudf.kernels.Exec;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.calcite.rel.RelNode;

/**
 * Per-query state: the kernels' execution state, the catalog, the statement's parameter values,
 * and the results of operators that several parents read (kept until the last has read them);
 * the session closes it after the query.
 */
public final class QueryContext implements AutoCloseable {
  private final Exec exec;
  private final Catalog catalog;
  private final List<Object> parameters;
  private final Cancellation cancellation;
  // operators read by more than one parent: how many reads are still to come, and the result
  private final Map<GpuRel, Integer> readsLeft = new IdentityHashMap<>();
  private final Map<GpuRel, Table<?>> shared = new IdentityHashMap<>();
  // hash indexes of shared operators' results, made by the first join that probes one and kept
  // for the parents still to read it: by operator, then by key columns
  private final Map<GpuRel, Map<List<Integer>, dev.gpudf.kernels.Join.Index>> joinIndexes = new IdentityHashMap<>();
  // chunks of file tables being read ahead of their scans (from the query's start, or by a union
  // for its next branch), by table and chunk: the first scan of the chunk takes the read
  private final Map<ChunkKey, ChunkRead> readAhead = new java.util.HashMap<>();

  QueryContext(Exec exec, Catalog catalog, List<Object> parameters) {
    this(exec, catalog, parameters, Cancellation.start());
  }

  QueryContext(Exec exec, Catalog catalog, List<Object> parameters, Cancellation cancellation) {
    // checked before each operator here, and inside operators at each device allocation and CPU-twin loop
    this.exec = exec.checkpoints(cancellation::check);
    this.catalog = catalog;
    this.parameters = parameters;
    this.cancellation = cancellation;
  }

  /**
   * Takes the reads of {@code early} (null: none) as reads started ahead of this query's scans of
   * chunk 0 of their tables; returns this.
   */
  QueryContext adopt(EarlyReads early) {
    if (early != null) {
      early.takeAll().forEach((table, read) -> readAhead.put(new ChunkKey(table, 0), read));
    }
    return this;
  }

  /** The values of the statement's {@code ?} parameters, in order (a null element is SQL NULL). */
  public List<Object> parameters() {
    return parameters;
  }

  public Exec exec() {
    return exec;
  }

  public Catalog catalog() {
    return catalog;
  }

  /**
   * Runs physical plan {@code root}; the caller closes the result. An operator that several
   * parents read (the same subtree joined in every chunk branch of a chunked table) runs once.
   * A query that runs out of device memory runs once more after the catalog has spilled every
   * column no query is reading to host memory ({@link Catalog#spillIdle}), when it had any.
   */
  Table<?> execute(GpuRel root) {
    try {
      return attempt(root);
    } catch (GpuOutOfMemoryException e) {
      if (exec.hasGpu()) {
        exec.stream().synchronize();
      }
      if (catalog.spillIdle() == 0) {
        throw e;
      }
      try {
        return attempt(root);
      } catch (GpuOutOfMemoryException again) {
        again.addSuppressed(e);
        throw again;
      }
    }
  }

  private Table<?> attempt(GpuRel root) {
    dropShared();
    readsLeft.clear();
    Map<RelNode, Integer> parents = new IdentityHashMap<>();
    countParents(root, parents);
    parents.forEach((node, n) -> {
      if (n > 1) {
        readsLeft.put((GpuRel) node, n);
      }
    });
    cancellation.check();
    if (exec.hasGpu()) {
      // the device then decodes the query's tables at once rather than each when its scan runs:
      // a decode takes as long as its largest page, tens of milliseconds whatever the table's
      // size; a CPU catalog reads each scan anew, its own columns only
      readAhead(root);
    }
    return checked(root, root.execute(this));
  }

  /** A chunk of a table, as scans name it (an unsplit table's is chunk 0). */
  private record ChunkKey(String table, int chunk) {
    static ChunkKey of(GpuTableScan scan) {
      CatalogTable t = scan.getTable().unwrap(CatalogTable.class);
      return new ChunkKey(t.name().toLowerCase(java.util.Locale.ROOT), Math.max(0, t.chunk()));
    }
  }

  /**
   * Adds each chunk {@code node} scans outside a union, with the columns its scans take (null:
   * all). A subtree already run for another of its parents ({@link #run}) scans nothing again: a
   * union's branch shared with another union (TPC-H q18's lineitem chunks, both in its IN and in
   * its join) had each of its chunks read a second time for nothing.
   */
  private void scansOutsideUnions(RelNode node, Map<ChunkKey, int[]> wanted) {
    if (shared.containsKey(node)) {
      return;
    }
    if (node instanceof GpuTableScan scan) {
      ChunkKey key = ChunkKey.of(scan);
      int[] columns = scan.getTable().unwrap(CatalogTable.class).columns();
      if (!wanted.containsKey(key)) {
        wanted.put(key, columns);
      } else if (wanted.get(key) != null) {
        int[] had = wanted.get(key);
        wanted.put(key, columns == null ? null : java.util.stream.IntStream.concat(java.util.Arrays.stream(had),
            java.util.Arrays.stream(columns)).distinct().toArray());
      }
    } else if (!(node instanceof GpuUnion)) {
      node.getInputs().forEach(n -> scansOutsideUnions(n, wanted));
    }
  }

  /**
   * With {@code -Dgpudf.debug.checkLayout=true}, {@code t} after its operator checked: every column
   * still open, and a device string column in the layout every kernel assumes (offsets from 0 to
   * its byte count), so the operator that breaks either is named instead of a later one reading
   * freed or foreign bytes; otherwise {@code t} unchecked.
   */
  private Table<?> checked(GpuRel rel, Table<?> t) {
    if (!CHECK_LAYOUT) {
      return t;
    }
    for (int c = 0; c < t.columnCount(); c++) {
      dev.gpudf.columnar.Column col = t.column(c);
      String problem = null;
      if (col.refCount() <= 0) {
        problem = "is closed";
      } else if (col instanceof dev.gpudf.columnar.DeviceColumn d) {
        problem = dev.gpudf.kernels.DeviceLayout.problem(exec, d);
      }
      if (problem != null) {
        String name = t.names().get(c);
        t.close();
        throw new dev.gpudf.columnar.error.InternalException(rel.getRelTypeName() + "#" + rel.getId() + " column " + c
            + " (" + name + ") " + problem);
      }
    }
    return t;
  }

  private static final boolean CHECK_LAYOUT = Boolean.getBoolean("gpudf.debug.checkLayout");

  private static void countParents(RelNode node, Map<RelNode, Integer> parents) {
    for (RelNode input : node.getInputs()) {
      // a shared subtree's own inputs are counted once: it runs once
      if (parents.merge(input, 1, Integer::sum) == 1) {
        countParents(input, parents);
      }
    }
  }

  /** Whether a parent other than the one asking reads {@code rel} in this query (it runs once, for all). */
  boolean readByOthers(GpuRel rel) {
    return readsLeft.containsKey(rel);
  }

  /** Runs {@code rel} for one of its parents (see {@link #execute}); the caller closes the result. */
  Table<?> run(GpuRel rel) {
    cancellation.check();
    Integer left = readsLeft.get(rel);
    if (left == null) {
      return checked(rel, rel.execute(this));
    }
    Table<?> t = shared.get(rel);
    if (t == null) {
      t = checked(rel, rel.execute(this));
      shared.put(rel, t);
    }
    t.retain();
    if (left == 1) {
      readsLeft.remove(rel);
      shared.remove(rel).close();
    } else {
      readsLeft.put(rel, left - 1);
    }
    return t;
  }

  /**
   * Starts reading the chunks of file tables that {@code branch} scans outside a union (see
   * {@link ChunkRead}), each chunk once with the columns of all its scans there: a GPU query's
   * whole plan as it starts, and a union of a table's chunks its first branch and then, as each
   * runs, the branch after it, so one chunk is decoded on the host while the one before it is
   * uploaded and worked on, and each file is read in order by one thread. A union inside {@code
   * branch} is left alone: it reads ahead its own branches. On the GPU a read also queues the
   * chunk's decoding on the device ({@link ChunkColumns}). A chunk already being read is left
   * to that read.
   */
  void readAhead(RelNode branch) {
    Map<ChunkKey, int[]> wanted = new java.util.LinkedHashMap<>();
    scansOutsideUnions(branch, wanted);
    wanted.forEach((key, columns) -> {
      if (!readAhead.containsKey(key)) {
        ChunkRead read = catalog.readAhead(key.table(), key.chunk(), columns);
        if (read != null) {
          readAhead.put(key, read);
        }
      }
    });
  }

  /**
   * The read started ahead of {@code scan}'s chunk when no other scan has taken it, or null; the
   * caller hands it to {@link Catalog#acquire}, which takes its rows when it read the columns the
   * chunk lacks (a read of more fills them all).
   */
  ChunkRead readAheadFor(GpuTableScan scan) {
    return readAhead.remove(ChunkKey.of(scan));
  }

  /**
   * Whether a join of {@code rel}'s result probes an index shared with other joins of it: one kept
   * for parents still to read {@code rel}, or made by one before ({@link #joinIndex}). Where none
   * is, the join is left to index the side it chooses ({@link dev.gpudf.kernels.Join}: a SEMI or
   * ANTI join indexes a smaller left side).
   */
  boolean sharesJoinIndex(GpuRel rel) {
    return readsLeft.containsKey(rel) || joinIndexes.containsKey(rel);
  }

  /**
   * The hash index on key columns {@code keys} of {@code right}, the result of operator {@code
   * rel} that a join probes: made once and kept while other parents of {@code rel} are still to
   * read it (each chunk of a split table joined to one table), else made for this join alone.
   * Valid while {@code right} is open: the caller's join uses it at once.
   */
  dev.gpudf.kernels.Join.Index joinIndex(GpuRel rel, dev.gpudf.columnar.HostTable right, int[] keys) {
    boolean more = readsLeft.containsKey(rel);
    Map<List<Integer>, dev.gpudf.kernels.Join.Index> byKeys = more
        ? joinIndexes.computeIfAbsent(rel, r -> new java.util.HashMap<>()) : joinIndexes.remove(rel);
    List<Integer> k = java.util.Arrays.stream(keys).boxed().toList();
    dev.gpudf.kernels.Join.Index index = byKeys == null ? null : byKeys.get(k);
    if (index == null) {
      index = dev.gpudf.kernels.Join.index(right, keys);
      if (more) {
        byKeys.put(k, index);
      }
    }
    return index;
  }

  /** Closes the results of shared operators that a failed attempt left for readers that never took them. */
  private void dropShared() {
    joinIndexes.clear();
    shared.values().forEach(Table::close);
    shared.clear();
  }

  @Override
  public void close() {
    try {
      // each waits for its read to end: nothing read for this query outlives it
      readAhead.values().forEach(ChunkRead::close);
      readAhead.clear();
      dropShared();
    } finally {
      exec.close();
    }
  }
}
