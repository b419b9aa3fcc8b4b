package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.sql.GpuSession;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * Imports on a GPU: another process ({@link ImportProducer}) hands its device tables to the
 * server as CUDA IPC handles. Every type with NULLs and non-ASCII text, 0, 1 and many rows, append
 * and replace, a slice whose string offsets do not start at 0, all equal to the tables the
 * producer made (after the producer changed its own memory: the server holds copies); every lie
 * about the memory refused with a message naming it, nothing made of it, and no pool memory left
 * behind.
 */
class DeviceImportTest {
  private static final int ROWS = 70_001;

  @RequiresGpu
  @Test
  void anotherProcessesDeviceTablesBecomeTables() throws Exception {
    try (RootAllocator allocator = new RootAllocator(); Gpu gpu = Gpu.open(0);
        GpuSession session = GpuSession.gpu(gpu, allocator)) {
      long poolBefore = gpu.pool().stats().allocated();
      String output;
      try (GpudfFlightServer server = GpudfFlightServer.start(session, allocator,
          GpudfFlightServer.Options.plain("localhost", 0))) {
        Process child = new ProcessBuilder(DeviceHandOffTest.javaCommand(ImportProducer.class.getName(),
            String.valueOf(server.port()), String.valueOf(ROWS))).redirectErrorStream(true).start();
        output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.waitFor(), output);
      }
      for (String ok : List.of("t", "twice", "twice+", "one", "empty", "replaced", "replaced=", "slice", "kept", "kept=",
          "unkept")) {
        Matcher m = Pattern.compile("(?m)^ok " + Pattern.quote(ok) + " rows=(\\d+) bytes_copied=(\\d+) bytes_to_host=(\\d+)")
            .matcher(output);
        assertTrue(m.find(), ok + " was imported: " + output);
        assertEquals("0", m.group(3), ok + ": no data went through the host");
        assertTrue(Long.parseLong(m.group(2)) > 0 || m.group(1).equals("0"), ok + " copied its bytes");
      }
      refused(output, "exists", "INVALID_ARGUMENT: table 't' already exists");
      refused(output, "missing", "INVALID_ARGUMENT: no table 'nope' to append into");
      refused(output, "mode", "INVALID_ARGUMENT: an import's mode is create, append or replace, not 'upsert'");
      refused(output, "bigger", "INVALID_ARGUMENT: an exported allocation said to hold");
      refused(output, "handle", "INVALID_ARGUMENT: a CUDA IPC memory handle cannot be opened here");
      refused(output, "outside", "INVALID_ARGUMENT: import into 'outside': column 'i64''s data lie at bytes");
      refused(output, "nulls", "INVALID_ARGUMENT: import into 'nulls': column 'i64' says it has");
      Matcher corrupted = Pattern.compile("corrupted str row (\\d+)").matcher(output);
      assertTrue(corrupted.find(), output);
      refused(output, "utf8", "INVALID_ARGUMENT: import into 'utf8': column 'str' row " + corrupted.group(1)
          + " is not UTF-8");
      refused(output, "backwards", "INVALID_ARGUMENT: import into 'backwards': column 'str' has bad offsets: offset 10 ");
      // a kept mapping: opened by the first import, found open by the second (which still copied
      // the memory as it was then), refused at another size, unmapped, and opened again after
      assertTrue(output.matches("(?s).*\\nok kept rows=1 .* opened=[1-9]\\d* reused=0\\n.*"), output);
      assertTrue(output.matches("(?s).*\\nok kept= rows=1 .* opened=0 reused=[1-9]\\d*\\n.*"), output);
      refused(output, "resized", "INVALID_ARGUMENT: an allocation mapped here as ");
      assertTrue(output.matches("(?s).*\\nunmapped [1-9]\\d* still_kept 0\\n.*"), output);
      assertTrue(output.matches("(?s).*\\nok unkept rows=1 .* opened=[1-9]\\d* reused=0\\n.*"), output);
      try (VectorSchemaRoot kept = session.query("SELECT i64 FROM kept")) {
        assertEquals(ImportProducer.KEPT_VALUE, ((org.apache.arrow.vector.BigIntVector) kept.getVector(0)).get(0),
            "the second import copied the memory as the producer had changed it");
      }
      assertEquals(List.of("t", "twice", "one", "empty", "replaced", "slice", "kept", "unkept"), session.catalog().names(),
          "the refused imports made nothing");

      try (VectorSchemaRoot t = TestTables.allTypes(allocator, ROWS, ImportProducer.NULLS, ImportProducer.SEED);
          VectorSchemaRoot one = TestTables.allTypes(allocator, 1, ImportProducer.NULLS, ImportProducer.SEED);
          VectorSchemaRoot slice = TestTables.slice(t, ImportProducer.SLICE_FROM, ImportProducer.SLICE_ROWS)) {
        assertEquals(t.contentToTSVString(), content(session, "t"), "t");
        String body = t.contentToTSVString().substring(t.contentToTSVString().indexOf('\n') + 1);
        assertEquals(t.contentToTSVString() + body, content(session, "twice"), "twice: created, then appended to");
        assertEquals(one.contentToTSVString(), content(session, "one"));
        assertEquals(one.contentToTSVString(), content(session, "replaced"));
        assertEquals(slice.contentToTSVString(), content(session, "slice"), "a slice whose offsets start past 0");
        try (VectorSchemaRoot empty = session.query("SELECT * FROM \"empty\"")) {
          assertEquals(0, empty.getRowCount());
          List<String> names = new ArrayList<>();
          empty.getSchema().getFields().forEach(f -> names.add(f.getName()));
          assertEquals(List.of("bool", "i8", "i16", "i32", "i64", "f32", "f64", "dec18", "dec38", "date", "ts_utc", "ts_nano",
              "str"), names);
        }
      }
      for (String name : List.copyOf(session.catalog().names())) {
        session.catalog().drop(name);
      }
      assertEquals(poolBefore, gpu.pool().stats().allocated(), "every byte of the imports and the refusals went back");
    }
  }

  private static String content(GpuSession session, String table) {
    try (VectorSchemaRoot r = session.query("SELECT * FROM \"" + table + "\"")) {
      return r.contentToTSVString();
    }
  }

  private static void refused(String output, String name, String message) {
    String line = output.lines().filter(l -> l.startsWith("refused " + name + " ")).findFirst().orElse(null);
    assertTrue(line != null && line.contains(message), "expected '" + message + "' for " + name + ": " + output);
  }
}
