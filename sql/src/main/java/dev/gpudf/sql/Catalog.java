package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The session's tables, resident in the backend's memory (on the device for a GPU session) and
 * reused by every query. Names are case-insensitive. The catalog holds one reference to each
 * table and closes them when it closes.
 */
public final class Catalog implements AutoCloseable {
  private final Gpu gpu;
  private final Map<String, Table<?>> tables = new LinkedHashMap<>();
  private static final String HIDDEN = "$frame";
  private final Map<String, TableConstraints> constraints = new java.util.HashMap<>();
  private final Map<String, String> indexes = new java.util.HashMap<>();
  // bumped at every change of a table's rows, so a writer of files can tell what changed
  private final Map<String, Long> versions = new java.util.HashMap<>();
  private long version;
  private int hidden;

  /** A catalog whose tables live on {@code gpu}, or on the host when it is null. */
  Catalog(Gpu gpu) {
    this.gpu = gpu;
  }

  /** Loads {@code root} as table {@code name} (copied to the device for a GPU session); the caller keeps {@code root}. */
  public synchronized void register(String name, VectorSchemaRoot root) {
    String key = name.toLowerCase(Locale.ROOT);
    if (tables.containsKey(key)) {
      throw new UserException("table '" + name + "' already exists");
    }
    tables.put(key, TableOps.load(gpu, root));
    versions.put(key, ++version);
  }

  /**
   * Loads {@code root} as a table that {@link #names} does not list (the rows of a DataFrame
   * made from Arrow or a file) and returns its generated name; the caller keeps {@code root}.
   */
  synchronized String registerHidden(VectorSchemaRoot root) {
    String name = HIDDEN + (++hidden);
    register(name, root);
    return name;
  }

  /** Replaces the rows of existing table {@code name} by {@code root} (copied, as for {@link #register}); the caller keeps {@code root}. */
  public synchronized void replace(String name, VectorSchemaRoot root) {
    String key = name.toLowerCase(Locale.ROOT);
    if (!tables.containsKey(key)) {
      throw new UserException("no table '" + name + "'");
    }
    // load first: if that fails, the table keeps its old rows
    tables.put(key, TableOps.load(gpu, root)).close();
    versions.put(key, ++version);
  }

  /** Removes and closes table {@code name}, with its constraints and indexes. */
  public synchronized void drop(String name) {
    String key = name.toLowerCase(Locale.ROOT);
    Table<?> t = tables.remove(key);
    if (t == null) {
      throw new UserException("no table '" + name + "'");
    }
    constraints.remove(key);
    indexes.values().removeIf(key::equals);
    versions.remove(key);
    t.close();
  }

  /** What table {@code name} promises about its rows ({@link TableConstraints#NONE} unless declared). */
  synchronized TableConstraints constraints(String name) {
    return constraints.getOrDefault(name.toLowerCase(Locale.ROOT), TableConstraints.NONE);
  }

  /** Declares what table {@code name} promises; the caller has checked that its rows keep it. */
  synchronized void constrain(String name, TableConstraints c) {
    constraints.put(name.toLowerCase(Locale.ROOT), c);
  }

  /** Whether index {@code index} (lower case) exists; indexes are recorded, unused by plans, so DROP INDEX and name clashes behave. */
  synchronized boolean hasIndex(String index) {
    return indexes.containsKey(index);
  }

  /** Records index {@code index} (lower case) on table {@code table}; a taken name is a {@link UserException}. */
  synchronized void addIndex(String index, String table) {
    if (indexes.putIfAbsent(index, table) != null) {
      throw new UserException("index '" + index + "' already exists");
    }
  }

  /** Forgets index {@code index} (lower case) and returns its table, or null if there was none. */
  synchronized String dropIndex(String index) {
    return indexes.remove(index);
  }

  /** The tables' names (lower case), in the order they were registered. */
  public synchronized List<String> names() {
    return tables.keySet().stream().filter(n -> !n.startsWith(HIDDEN)).toList();
  }

  /** Each listed table's version: a number that changes whenever its rows are replaced. */
  public synchronized Map<String, Long> versions() {
    Map<String, Long> out = new java.util.TreeMap<>(versions);
    out.keySet().removeIf(n -> n.startsWith(HIDDEN));
    return out;
  }

  /** Table {@code name}'s version (see {@link #versions}); a {@link UserException} if there is no such table. */
  synchronized long version(String name) {
    Long v = versions.get(name.toLowerCase(Locale.ROOT));
    if (v == null) {
      throw new UserException("no table '" + name + "'");
    }
    return v;
  }

  synchronized Map<String, Table<?>> tables() {
    return Map.copyOf(tables);
  }

  /** The table {@code name}, retained for the caller, who closes it. */
  synchronized Table<?> acquire(String name) {
    Table<?> t = tables.get(name.toLowerCase(Locale.ROOT));
    if (t == null) {
      throw new UserException("no table '" + name + "'");
    }
    t.retain();
    return t;
  }

  @Override
  public synchronized void close() {
    tables.values().forEach(Table::close);
    tables.clear();
  }
}
