package dev.gpudf.flight;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.DeviceIpc;
import dev.gpudf.columnar.cuda.Gpu;
import java.io.FileOutputStream;
import java.nio.file.Path;
import java.util.Base64;
import jcuda.Pointer;
import jcuda.driver.JCudaDriver;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;

/**
 * The other process of {@link DeviceHandOffTest}: exports a query result from the server on
 * {@code args[0]} (port) for the SQL in {@code args[1]}; reads every byte of each exported
 * allocation, as a hostile consumer would, and counts those outside the result's buffers that are
 * not zero; maps the result, copies it to the host here (to check it, in this process) into the
 * Arrow file {@code args[2]}, releases the lease, and prints the descriptor's figures.
 */
public final class HandOffConsumer {
  private HandOffConsumer() {}

  public static void main(String[] args) throws Exception {
    try (RootAllocator allocator = new RootAllocator();
        FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("localhost", Integer.parseInt(args[0])))
            .build();
        Gpu gpu = Gpu.open(0)) {
      DeviceHandOff.Descriptor d = DeviceHandOff.export(client, new DeviceHandOff.Request(args[1], null));
      try {
        long outside = 0;
        boolean sizesMatch = true;
        for (int i = 0; i < d.allocations().size(); i++) {
          DeviceHandOff.Allocation a = d.allocations().get(i);
          try (DeviceIpc.Mapping m = DeviceIpc.open(gpu.device(), Base64.getDecoder().decode(a.handle()), a.size())) {
            sizesMatch &= m.driverSize() == a.size();
            outside += nonZeroOutside(gpu, m, d, i);
          }
        }
        try (DeviceTable table = DeviceHandOff.map(gpu, d);
            VectorSchemaRoot root = table.toArrow(allocator);
            FileOutputStream out = new FileOutputStream(Path.of(args[2]).toFile());
            ArrowFileWriter writer = new ArrowFileWriter(root, null, out.getChannel())) {
          writer.start();
          writer.writeBatch();
          writer.end();
          System.out.println("rows=" + d.rows() + " allocations=" + d.allocations().size() + " bytes_to_host="
              + d.bytesToHost() + " nonzero_outside_result=" + outside + " sizes_match=" + sizesMatch
              + " schema_matches=" + root.getSchema().equals(org.apache.arrow.vector.types.pojo.Schema.deserializeMessage(
                  java.nio.ByteBuffer.wrap(Base64.getDecoder().decode(d.arrowSchema())))));
        }
      } finally {
        DeviceHandOff.release(client, d.lease());
      }
    }
  }

  /** Bytes of allocation {@code index}, all of it as the driver maps it, that are not zero and lie outside every buffer of {@code d}. */
  private static long nonZeroOutside(Gpu gpu, DeviceIpc.Mapping m, DeviceHandOff.Descriptor d, int index) {
    long size = m.driverSize();
    boolean[] inside = new boolean[Math.toIntExact(size)];
    for (DeviceHandOff.Column c : d.columns()) {
      for (DeviceHandOff.Region r : new DeviceHandOff.Region[] {c.data(), c.offsets(), c.validity()}) {
        if (r != null && r.allocation() == index) {
          java.util.Arrays.fill(inside, Math.toIntExact(r.offset()), Math.toIntExact(r.offset() + r.size()), true);
        }
      }
    }
    byte[] bytes = new byte[inside.length];
    try (CudaStream stream = gpu.newStream(); DeviceBuffer all = m.buffer(0, size, stream)) {
      check(JCudaDriver.cuMemcpyDtoH(Pointer.to(bytes), all.pointer(), size), "cuMemcpyDtoH");
    }
    long count = 0;
    for (int i = 0; i < bytes.length; i++) {
      count += !inside[i] && bytes[i] != 0 ? 1 : 0;
    }
    return count;
  }
}
