package dev.gpudf.columnar;

import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/** Maps Arrow field types to gpudf {@link DataType}s and back; anything else is rejected by name. */
public final class ArrowTypes {
  private ArrowTypes() {}

  /**
   * The gpudf type of an Arrow field. Throws {@link NotSupportedException} naming the column and
   * the Arrow type for anything gpudf does not store (nested, unsigned, half float, large or
   * binary strings, 256-bit decimals, millisecond dates, intervals, ...).
   */
  public static DataType fromArrow(Field field) {
    if (field.getDictionary() != null) {
      throw new NotSupportedException("column '" + field.getName() + "' is dictionary-encoded: its values must be decoded"
          + " where it is read (ArrowDictionaries), or its codes would pass for the values");
    }
    ArrowType t = field.getType();
    DataType d = switch (t.getTypeID()) {
      case Bool -> DataType.BOOL;
      case Int -> {
        ArrowType.Int i = (ArrowType.Int) t;
        if (!i.getIsSigned()) {
          yield null;
        }
        yield switch (i.getBitWidth()) {
          case 8 -> DataType.INT8;
          case 16 -> DataType.INT16;
          case 32 -> DataType.INT32;
          case 64 -> DataType.INT64;
          default -> null;
        };
      }
      case FloatingPoint -> switch (((ArrowType.FloatingPoint) t).getPrecision()) {
        case SINGLE -> DataType.FLOAT32;
        case DOUBLE -> DataType.FLOAT64;
        case HALF -> null;
      };
      case Decimal -> {
        ArrowType.Decimal dec = (ArrowType.Decimal) t;
        yield dec.getBitWidth() == 128 && dec.getScale() >= 0 && dec.getScale() <= dec.getPrecision()
            ? DataType.decimal(dec.getPrecision(), dec.getScale()) : null;
      }
      case Date -> ((ArrowType.Date) t).getUnit() == DateUnit.DAY ? DataType.DATE : null;
      case Timestamp -> {
        ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
        yield DataType.timestamp(switch (ts.getUnit()) {
          case SECOND -> TimeUnit.SECOND;
          case MILLISECOND -> TimeUnit.MILLISECOND;
          case MICROSECOND -> TimeUnit.MICROSECOND;
          case NANOSECOND -> TimeUnit.NANOSECOND;
        }, ts.getTimezone());
      }
      case Utf8 -> DataType.STRING;
      default -> null;
    };
    if (d == null) {
      throw new NotSupportedException("column '" + field.getName() + "' has Arrow type " + describe(field)
          + ", which gpudf does not support (supported: Bool, signed Int 8..64, Float 32/64, Decimal128 up to"
          + " precision 38, Date(DAY), Timestamp, Utf8)");
    }
    return d;
  }

  /**
   * The gpudf types of {@code root}'s columns, after checking that every column is supported and
   * as long as the batch; throws naming the first offending column.
   */
  public static List<DataType> checkBatch(VectorSchemaRoot root) {
    List<DataType> types = new ArrayList<>();
    for (FieldVector v : root.getFieldVectors()) {
      types.add(fromArrow(v.getField()));
      if (v.getValueCount() != root.getRowCount()) {
        throw new UserException("column '" + v.getName() + "' has " + v.getValueCount()
            + " values but the batch has " + root.getRowCount() + " rows");
      }
    }
    return types;
  }

  /** The Arrow type for a gpudf type. */
  public static ArrowType toArrow(DataType type) {
    return switch (type.id()) {
      case BOOL -> ArrowType.Bool.INSTANCE;
      case INT8 -> new ArrowType.Int(8, true);
      case INT16 -> new ArrowType.Int(16, true);
      case INT32 -> new ArrowType.Int(32, true);
      case INT64 -> new ArrowType.Int(64, true);
      case FLOAT32 -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case FLOAT64 -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case DECIMAL -> new ArrowType.Decimal(type.precision(), type.scale(), 128);
      case DATE -> new ArrowType.Date(DateUnit.DAY);
      case TIMESTAMP -> new ArrowType.Timestamp(switch (type.timeUnit()) {
        case SECOND -> org.apache.arrow.vector.types.TimeUnit.SECOND;
        case MILLISECOND -> org.apache.arrow.vector.types.TimeUnit.MILLISECOND;
        case MICROSECOND -> org.apache.arrow.vector.types.TimeUnit.MICROSECOND;
        case NANOSECOND -> org.apache.arrow.vector.types.TimeUnit.NANOSECOND;
      }, type.timeZone());
      case STRING -> ArrowType.Utf8.INSTANCE;
    };
  }

  /** A nullable Arrow field named {@code name} of type {@code type}. */
  public static Field toArrowField(String name, DataType type) {
    return Field.nullable(name, toArrow(type));
  }

  private static String describe(Field field) {
    if (field.getChildren().isEmpty()) {
      return field.getType().toString();
    }
    return field.getType() + field.getChildren().stream().map(Field::toString).collect(Collectors.joining(", ", "<", ">"));
  }
}
