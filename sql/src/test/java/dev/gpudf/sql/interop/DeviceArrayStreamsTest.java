package dev.gpudf.sql.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.kernels.Exec;
import dev.gpudf.sql.GpuSession;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.Test;

/**
 * Streams of device batches ({@code ArrowDeviceArrayStream}) through their C callbacks: on the CPU,
 * a stream's schema, its end, its errors (with their messages and errnos) and its release, both
 * ways through gpudf's native library; on a GPU, gpudf's batches read by a C consumer and by
 * gpudf's own importer, and a C producer's batches become tables, every batch released.
 */
class DeviceArrayStreamsTest {
  private static final List<String> NAMES = List.of("a", "d", "s");
  private static final List<DataType> TYPES = List.of(DataType.INT64, DataType.decimal(10, 2), DataType.STRING);

  /** Batches from a list, recording whether the stream closed it. */
  private static final class Batches implements Iterator<DeviceTable>, AutoCloseable {
    private final Iterator<DeviceTable> tables;
    private final RuntimeException failure;
    boolean closed;

    Batches(List<DeviceTable> tables, RuntimeException failure) {
      this.tables = tables.iterator();
      this.failure = failure;
    }

    @Override
    public boolean hasNext() {
      return failure != null || tables.hasNext();
    }

    @Override
    public DeviceTable next() {
      if (failure != null) {
        throw failure;
      }
      if (!tables.hasNext()) {
        throw new NoSuchElementException();
      }
      return tables.next();
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  @Test
  void anEmptyStreamCarriesItsSchemaEndsAndIsReleased() {
    try (RootAllocator a = new RootAllocator(); Exec cpu = Exec.onCpu(a); ArrowBuf stream = a.buffer(DeviceArrayStreams.STREAM_BYTES)) {
      Batches batches = new Batches(List.of(), null);
      DeviceArrayStreams.exportStream(NAMES, TYPES, batches, a, stream.memoryAddress());
      assertEquals(DeviceArrays.ARROW_DEVICE_CUDA, stream.getInt(0));
      try (DeviceArrayStreams.Reader reader = DeviceArrayStreams.importStream(cpu, stream.memoryAddress())) {
        assertEquals(0, stream.getLong(32), "the stream was moved out of the caller's struct");
        List<String> described = new ArrayList<>();
        for (Field f : reader.schema().getChildren()) {
          described.add(f.getName() + " " + f.getType());
        }
        assertTrue(reader.schema().getType() instanceof ArrowType.Struct);
        assertEquals(List.of("a Int(64, true)", "d Decimal(10, 2, 64)", "s Utf8"), described);
        assertNull(reader.next());
        assertNull(reader.next(), "the end stays the end");
        assertTrue(!batches.closed, "the stream is not released before its reader closes");
      }
      assertTrue(batches.closed, "closing the reader released the stream, which closed its batches");
    }
  }

  @Test
  void aSourcesFailureReachesTheReaderWithItsMessageAndErrno() {
    try (RootAllocator a = new RootAllocator(); Exec cpu = Exec.onCpu(a); ArrowBuf stream = a.buffer(DeviceArrayStreams.STREAM_BYTES)) {
      for (RuntimeException failure : List.of(new UserException("no batch here, ünïcode"), new IllegalStateException("broken"))) {
        Batches batches = new Batches(List.of(), failure);
        DeviceArrayStreams.exportStream(NAMES, TYPES, batches, a, stream.memoryAddress());
        try (DeviceArrayStreams.Reader reader = DeviceArrayStreams.importStream(cpu, stream.memoryAddress())) {
          UserException e = assertThrows(UserException.class, reader::next);
          String errno = failure instanceof UserException ? "22" : "5";
          assertEquals("an imported device array stream's get_next (batch 1) failed (errno " + errno + "): "
              + failure.getMessage(), e.getMessage());
        }
        assertTrue(batches.closed);
      }
    }
  }

  @Test
  void aReleasedStreamOrOneOnAnotherDeviceIsRefused() {
    try (RootAllocator a = new RootAllocator(); Exec cpu = Exec.onCpu(a); ArrowBuf stream = a.buffer(DeviceArrayStreams.STREAM_BYTES)) {
      stream.setZero(0, DeviceArrayStreams.STREAM_BYTES);
      UserException released = assertThrows(UserException.class,
          () -> DeviceArrayStreams.importStream(cpu, stream.memoryAddress()));
      assertTrue(released.getMessage().contains("released already"), released.getMessage());
      Batches batches = new Batches(List.of(), null);
      DeviceArrayStreams.exportStream(NAMES, TYPES, batches, a, stream.memoryAddress());
      stream.setInt(0, 1);
      NotSupportedException cpuStream = assertThrows(NotSupportedException.class,
          () -> DeviceArrayStreams.importStream(cpu, stream.memoryAddress()));
      assertTrue(cpuStream.getMessage().contains("device type 1"), cpuStream.getMessage());
      assertTrue(batches.closed, "a refused stream is released to its producer");
    }
  }

  /** gpudf's batches (0, 1, 33 and 5,000 rows of every type) read by the C consumer, then by gpudf's importer; a batch of other columns is an error. */
  @RequiresGpu
  @Test
  void gpudfsBatchesCrossAStreamToCAndBack() {
    int[] sizes = {0, 1, 33, 5_000};
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20); CudaStream cuda = gpu.newStream();
        Exec exec = Exec.onGpu(gpu, a); ArrowBuf stream = a.buffer(DeviceArrayStreams.STREAM_BYTES)) {
      long poolBefore = gpu.pool().stats().allocated();
      List<VectorSchemaRoot> roots = new ArrayList<>();
      try {
        StringBuilder expected = new StringBuilder("stream device_type=2");
        for (int i = 0; i < sizes.length; i++) {
          roots.add(TestTables.allTypes(a, sizes[i], TestTables.Nulls.every(3), 20 + i));
          // each batch released by the consumer once read ("released=yes" closes each description)
          expected.append(" || ").append(DeviceArraysTest.expected(roots.get(i)));
        }
        expected.append(" || end | stream released=yes");
        long toHost = gpu.copier().bytesToHost();
        DeviceTable first = DeviceTable.fromArrow(gpu, roots.get(0), cuda);
        DeviceArrayStreams.exportStream(first.names(), first.types(), tables(gpu, roots, cuda, first), a, stream.memoryAddress());
        gpu.device().makeCurrent();
        assertEquals(expected.toString(), NativePeer.consumeStream(stream.memoryAddress()));
        assertEquals(toHost, gpu.copier().bytesToHost(), "a stream copies nothing to the host");

        DeviceTable again = DeviceTable.fromArrow(gpu, roots.get(0), cuda);
        DeviceArrayStreams.exportStream(again.names(), again.types(), tables(gpu, roots, cuda, again), a, stream.memoryAddress());
        try (DeviceArrayStreams.Reader reader = DeviceArrayStreams.importStream(exec, stream.memoryAddress())) {
          for (VectorSchemaRoot root : roots) {
            try (DeviceTable t = reader.next(); VectorSchemaRoot back = t.toArrow(a, cuda)) {
              assertEquals(root.contentToTSVString(), back.contentToTSVString());
            }
          }
          assertNull(reader.next());
        }

        DeviceTable other = DeviceTable.fromArrow(gpu, roots.get(1), cuda);
        DeviceArrayStreams.exportStream(NAMES, TYPES, List.of(other).iterator(), a, stream.memoryAddress());
        String failed = NativePeer.consumeStream(stream.memoryAddress());
        assertTrue(failed.endsWith(" || error 22: batch 1 of the stream has columns " + other.names() + " of " + other.types()
            + ", not the stream's " + NAMES + " of " + TYPES + " | stream released=yes"), failed);
      } finally {
        roots.forEach(VectorSchemaRoot::close);
      }
      assertEquals(poolBefore, gpu.pool().stats().allocated(), "every batch went back");
    }
  }

  /** The tables of {@code roots} on the device, {@code first} (already made) first, each made when the stream asks for it. */
  private static Iterator<DeviceTable> tables(Gpu gpu, List<VectorSchemaRoot> roots, CudaStream cuda, DeviceTable first) {
    return new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < roots.size();
      }

      @Override
      public DeviceTable next() {
        return next++ == 0 ? first : DeviceTable.fromArrow(gpu, roots.get(next - 1), cuda);
      }
    };
  }

  /** A C producer's stream of three batches becomes three tables; a failing batch is an error naming it; every batch and the stream go back. */
  @RequiresGpu
  @Test
  void aCProducersStreamBecomesTables() {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20); GpuSession session = GpuSession.gpu(gpu, a);
        Exec exec = Exec.onGpu(gpu, a); ArrowBuf stream = a.buffer(DeviceArrayStreams.STREAM_BYTES)) {
      gpu.device().makeCurrent();
      assertEquals(0, NativePeer.produceStream(33, 3, 0, stream.memoryAddress()));
      long toHost = 0;
      try (DeviceArrayStreams.Reader reader = DeviceArrayStreams.importStream(exec, stream.memoryAddress())) {
        for (int b = 0; b < 3; b++) {
          long before = gpu.copier().bytesToHost();
          try (DeviceTable t = reader.next()) {
            // the import alone (the query below brings its answer to the host)
            toHost += gpu.copier().bytesToHost() - before;
            session.catalog().register("native", t);
          }
          assertEquals(DeviceArraysTest.expectedSums(0, 33), DeviceArraysTest.sums(session), "batch " + (b + 1));
          session.catalog().drop("native");
        }
        assertNull(reader.next());
      }
      assertEquals(0, toHost, "reading a stream copies no data to the host");
      assertEquals(0, NativePeer.producedBytesLive(), "every batch went back to the producer");
      assertEquals(0, NativePeer.streamsLive(), "the stream was released");

      assertEquals(0, NativePeer.produceStream(5, 3, 2, stream.memoryAddress()));
      try (DeviceArrayStreams.Reader reader = DeviceArrayStreams.importStream(exec, stream.memoryAddress())) {
        reader.next().close();
        UserException e = assertThrows(UserException.class, reader::next);
        assertEquals("an imported device array stream's get_next (batch 2) failed (errno 22): the peer fails batch on purpose",
            e.getMessage());
      }
      assertEquals(0, NativePeer.producedBytesLive());
      assertEquals(0, NativePeer.streamsLive());
    }
  }
}
