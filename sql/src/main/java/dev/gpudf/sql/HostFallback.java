package dev.gpudf.sql;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.CudaStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Operators that have only a CPU twin, run on the host for a query of either backend. */
final class HostFallback {
  private HostFallback() {}

  /**
   * {@code op} over {@code inputs} on the host, for an operator that has only a CPU twin: device
   * inputs are copied to the host, and the result goes back to where the first input was. The
   * caller keeps the inputs and closes the result.
   */
  static Table<?> viaHost(QueryContext ctx, List<? extends Table<?>> inputs,
      java.util.function.Function<List<HostTable>, HostTable> op) {
    List<HostTable> host = new ArrayList<>();
    try {
      for (Table<?> t : inputs) {
        if (t instanceof HostTable h) {
          h.retain();
          host.add(h);
        } else {
          host.add(((DeviceTable) t).toHost(ctx.exec().allocator(), ctx.exec().stream()));
        }
      }
      try (HostTable result = op.apply(host)) {
        if (!(inputs.get(0) instanceof DeviceTable)) {
          result.retain();
          return result;
        }
        try (VectorSchemaRoot root = result.toArrow(ctx.exec().allocator());
            CudaStream stream = ctx.exec().gpu().newStream()) {
          return DeviceTable.fromArrow(ctx.exec().gpu(), root, stream);
        }
      }
    } finally {
      host.forEach(Table::close);
    }
  }

  /** Runs every input of {@code rel}, then {@link #viaHost} over them; the caller closes the result. */
  static Table<?> inputsViaHost(QueryContext ctx, GpuRel rel, java.util.function.Function<List<HostTable>, HostTable> op) {
    List<Table<?>> inputs = new ArrayList<>();
    try {
      for (int i = 0; i < rel.getInputs().size(); i++) {
        inputs.add(rel.input(ctx, i));
      }
      return viaHost(ctx, inputs, op);
    } finally {
      inputs.forEach(Table::close);
    }
  }
}
