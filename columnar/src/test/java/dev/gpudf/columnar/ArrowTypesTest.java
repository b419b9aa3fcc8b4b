package dev.gpudf.columnar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.util.List;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;

class ArrowTypesTest {
  @Test
  void everyTypeMapsToArrowAndBack() {
    List<DataType> all = List.of(DataType.BOOL, DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64,
        DataType.FLOAT32, DataType.FLOAT64, DataType.decimal(1, 0), DataType.decimal(18, 4), DataType.decimal(19, 2),
        DataType.decimal(38, 38), DataType.DATE, DataType.timestamp(TimeUnit.SECOND, null),
        DataType.timestamp(TimeUnit.MICROSECOND, "UTC"), DataType.timestamp(TimeUnit.NANOSECOND, "Europe/Paris"),
        DataType.STRING);
    for (DataType t : all) {
      assertEquals(t, ArrowTypes.fromArrow(ArrowTypes.toArrowField("c", t)), t.toString());
    }
  }

  @Test
  void deviceWidthsFollowTheLayout() {
    assertEquals(8, DataType.decimal(18, 2).byteWidth());
    assertEquals(16, DataType.decimal(19, 2).byteWidth());
    assertEquals(4, DataType.DATE.byteWidth());
    assertEquals(8, DataType.timestamp(TimeUnit.MILLISECOND, null).byteWidth());
    assertThrows(IllegalArgumentException.class, DataType.STRING::byteWidth);
  }

  @Test
  void unsupportedTypesNameColumnAndType() {
    Field list = new Field("tags", FieldType.nullable(ArrowType.List.INSTANCE),
        List.of(Field.nullable("item", new ArrowType.Int(32, true))));
    NotSupportedException e = assertThrows(NotSupportedException.class, () -> ArrowTypes.fromArrow(list));
    assertTrue(e.getMessage().contains("'tags'") && e.getMessage().contains("List"), e.getMessage());
    assertTrue(e.getMessage().contains("Int(32, true)"), e.getMessage());

    for (ArrowType t : List.of(new ArrowType.Int(32, false), new ArrowType.FloatingPoint(FloatingPointPrecision.HALF),
        new ArrowType.Date(DateUnit.MILLISECOND), ArrowType.LargeUtf8.INSTANCE, ArrowType.Binary.INSTANCE,
        new ArrowType.Decimal(40, 2, 256))) {
      NotSupportedException x = assertThrows(NotSupportedException.class,
          () -> ArrowTypes.fromArrow(Field.nullable("col_x", t)));
      assertTrue(x.getMessage().contains("'col_x'") && x.getMessage().contains(t.toString()), x.getMessage());
    }
  }

  @Test
  void invalidParametersAreUserErrors() {
    assertThrows(UserException.class, () -> DataType.decimal(39, 0));
    assertThrows(UserException.class, () -> DataType.decimal(5, 6));
    assertThrows(UserException.class, () -> new DataType(TypeId.INT32, 3, 0, null, null));
    assertThrows(UserException.class, () -> new DataType(TypeId.TIMESTAMP, 0, 0, null, null));
  }
}
