package dev.gpudf.flight;

import dev.gpudf.columnar.cuda.Gpu;
import java.io.FileOutputStream;
import java.nio.file.Path;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;

/**
 * The other process of {@link DeviceHandOffTest}: imports a query result from the server on
 * {@code args[0]} (port) for the SQL in {@code args[1]}, copies it to the host here (to check it,
 * in this process) into the Arrow file {@code args[2]}, and prints the descriptor's figures.
 */
public final class HandOffConsumer {
  private HandOffConsumer() {}

  public static void main(String[] args) throws Exception {
    try (RootAllocator allocator = new RootAllocator();
        FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("localhost", Integer.parseInt(args[0])))
            .build();
        Gpu gpu = Gpu.open(0)) {
      try (DeviceHandOff.Imported result = DeviceHandOff.importResult(client, gpu, args[1]);
          VectorSchemaRoot root = result.table().toArrow(allocator);
          FileOutputStream out = new FileOutputStream(Path.of(args[2]).toFile());
          ArrowFileWriter writer = new ArrowFileWriter(root, null, out.getChannel())) {
        writer.start();
        writer.writeBatch();
        writer.end();
        System.out.println("rows=" + result.descriptor().rows() + " allocations=" + result.descriptor().allocations().size()
            + " bytes_to_host=" + result.descriptor().bytesToHost() + " schema_matches=" + root.getSchema().equals(
            org.apache.arrow.vector.types.pojo.Schema.deserializeMessage(java.nio.ByteBuffer.wrap(
                java.util.Base64.getDecoder().decode(result.descriptor().arrowSchema())))));
      }
    }
  }
}
