package io.datum.cdc.kafka.connect;

import io.datum.cdc.event.PgJson;
import io.datum.cdc.kafka.connect.RecordSettings.DecimalMode;
import io.datum.cdc.kafka.connect.RecordSettings.IntervalMode;
import io.datum.cdc.kafka.connect.RecordSettings.TimePrecisionMode;
import io.datum.cdc.kafka.connect.TypeLookup.UserType;
import io.datum.cdc.kafka.connect.ValueMapper.Converter;
import io.datum.cdc.kafka.connect.ValueMapper.Unrepresentable;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;

/**
 * Builds the {@link ValueMapper} of a column type: the mapping table of
 * docs/kafka-connect-types.md. Builtin oids are mapped from {@link BuiltinType}; other oids are
 * described by the {@link TypeLookup} (domains become their base type, enums Debezium's {@code
 * io.debezium.data.Enum}, arrays an ARRAY of their element's mapping); a type neither knows is a
 * STRING of its text, as the library gives it.
 */
final class ValueMappers {

  /** Debezium's semantic type names (io.debezium.data.*, io.debezium.time.*). */
  static final String JSON = "io.debezium.data.Json";

  static final String UUID_NAME = "io.debezium.data.Uuid";
  static final String XML = "io.debezium.data.Xml";
  static final String ENUM = "io.debezium.data.Enum";
  static final String VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal";
  static final String DATE = "io.debezium.time.Date";
  static final String TIME = "io.debezium.time.Time";
  static final String MICRO_TIME = "io.debezium.time.MicroTime";
  static final String TIMESTAMP = "io.debezium.time.Timestamp";
  static final String MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp";
  static final String ZONED_TIME = "io.debezium.time.ZonedTime";
  static final String ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp";
  static final String MICRO_DURATION = "io.debezium.time.MicroDuration";
  static final String INTERVAL = "io.debezium.time.Interval";

  /** Debezium's Decimal parameter for the precision ({@code SpecialValueDecimal.builder}). */
  static final String PRECISION_PARAMETER = "connect.decimal.precision";

  /** Domains over domains deeper than this are taken as a catalog cycle (cannot happen). */
  private static final int MAX_DEPTH = 32;

  private static final Schema VARIABLE_SCALE_DECIMAL_SCHEMA =
      SchemaBuilder.struct()
          .name(VARIABLE_SCALE_DECIMAL)
          .version(1)
          .doc("Variable scaled decimal")
          .field("scale", Schema.INT32_SCHEMA)
          .field("value", Schema.BYTES_SCHEMA)
          .optional()
          .build();

  private final RecordSettings settings;
  private final TypeLookup types;
  private final String placeholder;
  private final byte[] placeholderBytes;

  /**
   * @param settings the representations to use
   * @param types describes non-builtin types
   */
  ValueMappers(RecordSettings settings, TypeLookup types) {
    this.settings = settings;
    this.types = types;
    this.placeholder = settings.unavailablePlaceholder();
    this.placeholderBytes = placeholder.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Builds the mapping of a column type.
   *
   * @param typeOid the column's type oid
   * @param typmod the column's type modifier, -1 if none
   * @param dimensions the dimensions an array column is declared with ({@code
   *     pg_attribute.attndims}), at least 1; ignored for other types
   * @return the mapping, with an optional schema
   * @throws org.apache.kafka.connect.errors.ConnectException if the type lookup fails
   */
  ValueMapper mapper(int typeOid, int typmod, int dimensions) {
    return mapper(typeOid, typmod, 0, Math.max(1, dimensions));
  }

  /** Builds a mapping, {@code depth} levels into domains and arrays. */
  private ValueMapper mapper(int oid, int typmod, int depth, int dimensions) {
    if (BuiltinType.isBuiltin(oid)) {
      BuiltinType element = BuiltinType.elementOfArray(oid);
      if (element != null) {
        return array(
            scalar(element, typmod),
            "_" + element.name().toLowerCase(Locale.ROOT),
            element,
            dimensions);
      }
      BuiltinType scalar = BuiltinType.of(oid);
      return scalar != null ? scalar(scalar, typmod) : text("oid " + oid);
    }
    UserType type = depth < MAX_DEPTH ? types.type(oid) : null;
    if (type == null) {
      return text("oid " + Integer.toUnsignedString(oid) + " (not in the catalog)");
    }
    String name = type.schema() + '.' + type.name();
    if (type.isArray()) {
      ValueMapper element = mapper(type.elementType(), typmod, depth + 1, 1);
      if (element.converter() == TEXT_LIKE && !listElement(type.elementType(), depth + 1)) {
        // arrays of extension base types are their array_out text in the library
        return text(name);
      }
      return array(element, name, null, dimensions);
    }
    return switch (type.kind()) {
      case 'd' ->
          mapper(
              type.baseType(),
              typmod >= 0 ? typmod : type.baseTypeModifier(),
              depth + 1,
              dimensions);
      case 'e' -> enumMapper(type, name);
      default -> text(name);
    };
  }

  /** Whether the library gives arrays of this element type as Lists (not their text). */
  private boolean listElement(int oid, int depth) {
    if (BuiltinType.isBuiltin(oid)) {
      return BuiltinType.of(oid) != null;
    }
    UserType type = depth < MAX_DEPTH ? types.type(oid) : null;
    if (type == null) {
      return false;
    }
    return switch (type.kind()) {
      case 'd' -> listElement(type.baseType(), depth + 1);
      case 'e', 'c', 'r', 'm' -> true;
      default -> false;
    };
  }

  /**
   * A String as it is. A List here is an array the library gave as a List where this mapping
   * expected its text (the two forms depend on the element type's kind, which a catalog change can
   * blur): it has no STRING value, so it goes to the header.
   */
  private static final Converter TEXT_LIKE =
      value ->
          value instanceof List<?> list
              ? new Unrepresentable(null, list.toString())
              : (String) value;

  /** A plain STRING of the text the library gives; the placeholder for unchanged TOAST. */
  private ValueMapper text(String typeName) {
    return new ValueMapper(Schema.OPTIONAL_STRING_SCHEMA, TEXT_LIKE, placeholder, typeName);
  }

  /** A STRING with a Debezium semantic name; the placeholder for unchanged TOAST. */
  private ValueMapper string(String semantic, Converter converter, String typeName) {
    Schema schema = SchemaBuilder.string().name(semantic).version(1).optional().build();
    return new ValueMapper(schema, converter, placeholder, typeName);
  }

  /** Debezium's {@code io.debezium.data.Enum}, with the labels as {@code allowed}. */
  private ValueMapper enumMapper(UserType type, String name) {
    Schema schema =
        SchemaBuilder.string()
            .name(ENUM)
            .version(1)
            .parameter("allowed", String.join(",", type.enumLabels()))
            .optional()
            .build();
    return new ValueMapper(schema, TEXT_LIKE, placeholder, name);
  }

  /** The mapping of a builtin scalar type. */
  private ValueMapper scalar(BuiltinType type, int typmod) {
    String name = type.name().toLowerCase(Locale.ROOT);
    return switch (type) {
      case BOOL -> plain(Schema.OPTIONAL_BOOLEAN_SCHEMA, v -> (Boolean) v, name);
      case INT2 -> plain(Schema.OPTIONAL_INT16_SCHEMA, v -> (Short) v, name);
      case INT4 -> plain(Schema.OPTIONAL_INT32_SCHEMA, v -> (Integer) v, name);
      case INT8, OID -> plain(Schema.OPTIONAL_INT64_SCHEMA, v -> (Long) v, name);
      case FLOAT4 -> plain(Schema.OPTIONAL_FLOAT32_SCHEMA, v -> (Float) v, name);
      case FLOAT8 -> plain(Schema.OPTIONAL_FLOAT64_SCHEMA, v -> (Double) v, name);
      case NUMERIC -> numeric(typmod);
      case BYTEA ->
          new ValueMapper(Schema.OPTIONAL_BYTES_SCHEMA, v -> (byte[]) v, placeholderBytes, name);
      case UUID -> string(UUID_NAME, v -> ((UUID) v).toString(), name);
      case JSON, JSONB -> string(JSON, v -> ((PgJson) v).text(), name);
      case XML -> string(XML, TEXT_LIKE, name);
      case DATE -> date();
      case TIME -> time(typmod);
      case TIMESTAMP -> timestamp(typmod);
      case TIMESTAMPTZ -> {
        int width = typmod == 0 ? 0 : Temporals.precision(typmod);
        yield string(ZONED_TIMESTAMP, v -> Temporals.zonedTimestamp(v, width), name);
      }
      case TIMETZ -> string(ZONED_TIME, Temporals::zonedTime, name);
      case INTERVAL ->
          settings.intervalMode() == IntervalMode.STRING
              ? string(INTERVAL, Temporals::intervalString, name)
              : plain(int64(MICRO_DURATION), Temporals::durationMicros, name);
      default -> text(name); // text types, money, network types, bits, ranges, ...
    };
  }

  /** A mapping without an unchanged-TOAST placeholder (the field is then null). */
  private static ValueMapper plain(Schema schema, Converter converter, String name) {
    return new ValueMapper(schema, converter, null, name);
  }

  /** An optional INT64 schema with a Debezium semantic name. */
  private static Schema int64(String semantic) {
    return SchemaBuilder.int64().name(semantic).version(1).optional().build();
  }

  /** {@code date} per the time precision mode. */
  private ValueMapper date() {
    if (settings.timePrecisionMode() == TimePrecisionMode.CONNECT) {
      return plain(
          org.apache.kafka.connect.data.Date.builder().optional().build(),
          v -> Temporals.connectDate((Integer) Temporals.epochDay(v)),
          "date");
    }
    return plain(
        SchemaBuilder.int32().name(DATE).version(1).optional().build(),
        Temporals::epochDay,
        "date");
  }

  /** {@code time} per the time precision mode and the column precision. */
  private ValueMapper time(int typmod) {
    TimePrecisionMode mode = settings.timePrecisionMode();
    if (mode == TimePrecisionMode.CONNECT) {
      return plain(
          org.apache.kafka.connect.data.Time.builder().optional().build(),
          v -> new java.util.Date((Integer) Temporals.milliOfDay(v)),
          "time");
    }
    if (mode == TimePrecisionMode.ADAPTIVE && Temporals.precision(typmod) <= 3) {
      return plain(
          SchemaBuilder.int32().name(TIME).version(1).optional().build(),
          Temporals::milliOfDay,
          "time");
    }
    return plain(int64(MICRO_TIME), Temporals::microOfDay, "time");
  }

  /** {@code timestamp} per the time precision mode and the column precision. */
  private ValueMapper timestamp(int typmod) {
    if (settings.timePrecisionMode() == TimePrecisionMode.CONNECT) {
      return plain(
          org.apache.kafka.connect.data.Timestamp.builder().optional().build(),
          v -> {
            Object millis = Temporals.epochMillis(v);
            return millis instanceof Long m ? new java.util.Date(m) : millis;
          },
          "timestamp");
    }
    if (Temporals.precision(typmod) <= 3) {
      return plain(int64(TIMESTAMP), Temporals::epochMillis, "timestamp");
    }
    return plain(int64(MICRO_TIMESTAMP), Temporals::epochMicros, "timestamp");
  }

  /**
   * {@code numeric} per the decimal mode; the typmod gives precision and scale (PostgreSQL
   * src/backend/utils/adt/numeric.c, {@code make_numeric_typmod}).
   */
  private ValueMapper numeric(int typmod) {
    DecimalMode mode = settings.decimalMode();
    if (mode == DecimalMode.STRING) {
      return new ValueMapper(
          Schema.OPTIONAL_STRING_SCHEMA, ValueMappers::numericString, placeholder, "numeric");
    }
    if (mode == DecimalMode.DOUBLE) {
      return plain(
          Schema.OPTIONAL_FLOAT64_SCHEMA,
          v -> v instanceof Double d ? d : (Object) ((BigDecimal) v).doubleValue(),
          "numeric");
    }
    if (typmod < 4) {
      return plain(VARIABLE_SCALE_DECIMAL_SCHEMA, ValueMappers::variableScale, "numeric");
    }
    int precision = ((typmod - 4) >> 16) & 0xffff;
    int scale = ((((typmod - 4) & 0x7ff) ^ 1024) - 1024); // PostgreSQL 15+ allows scale < 0
    Schema schema =
        Decimal.builder(scale)
            .parameter(PRECISION_PARAMETER, String.valueOf(precision))
            .optional()
            .build();
    return plain(
        schema,
        v ->
            v instanceof Double d
                ? new Unrepresentable(null, special(d))
                : ((BigDecimal) v).setScale(scale, RoundingMode.UNNECESSARY),
        "numeric(" + precision + "," + scale + ")");
  }

  /** Debezium's {@code VariableScaleDecimal} struct of a BigDecimal, keeping its scale. */
  private static Object variableScale(Object value) {
    if (value instanceof Double d) {
      return new Unrepresentable(null, special(d));
    }
    BigDecimal decimal = (BigDecimal) value;
    return new Struct(VARIABLE_SCALE_DECIMAL_SCHEMA)
        .put("scale", decimal.scale())
        .put("value", decimal.unscaledValue().toByteArray());
  }

  /** A numeric as exact decimal text, or its special value as Debezium spells it. */
  private static Object numericString(Object value) {
    return value instanceof Double d ? special(d) : ((BigDecimal) value).toPlainString();
  }

  /** Debezium's texts of numeric's special values ({@code PostgresValueConverter.N_A_N}, ...). */
  private static String special(Double d) {
    if (d.isNaN()) {
      return "NaN";
    }
    if (d == Double.POSITIVE_INFINITY) {
      return "Infinity";
    }
    if (d == Double.NEGATIVE_INFINITY) {
      return "-Infinity";
    }
    throw new ClassCastException("a numeric must be a BigDecimal or a special Double, not " + d);
  }

  /**
   * An ARRAY of the element mapping, nested {@code dimensions} deep (an {@code int[][]} column is
   * an ARRAY of ARRAYs of INT32). Debezium's TOAST placeholders are one-dimensional: a
   * multi-dimensional column has none.
   */
  private ValueMapper array(
      ValueMapper element, String typeName, BuiltinType builtinElement, int dimensions) {
    Schema schema = element.schema();
    for (int d = 0; d < dimensions; d++) {
      schema = SchemaBuilder.array(schema).optional().build();
    }
    Converter each = element.converter();
    // the array's text where a List was expected (see TEXT_LIKE): no ARRAY value, so the header
    Converter converter =
        value ->
            value instanceof String text
                ? new Unrepresentable(null, text)
                : convertArray((List<?>) value, each, dimensions, (List<?>) value);
    return new ValueMapper(
        schema,
        converter,
        dimensions == 1 ? arrayToast(element, builtinElement) : null,
        dimensions == 1 ? typeName : typeName + " (" + dimensions + " dimensions)");
  }

  /**
   * Converts an array of {@code dimensions} dimensions (Lists of Lists); a value with other
   * dimensions (PostgreSQL does not enforce the declared ones) has no value of the schema, and an
   * element without a representation is null: both with the whole array's text for the header.
   *
   * @param whole the outermost List, for the header text
   */
  private static Object convertArray(List<?> list, Converter each, int dimensions, List<?> whole) {
    List<Object> out = new ArrayList<>(list.size());
    boolean unrepresentable = false;
    for (Object element : list) {
      if (element == null) {
        out.add(null);
      } else if (dimensions > 1) {
        if (!(element instanceof List<?> inner)) {
          return new Unrepresentable(null, whole.toString()); // fewer dimensions
        }
        Object converted = convertArray(inner, each, dimensions - 1, whole);
        if (converted instanceof Unrepresentable u) {
          if (u.substitute() == null) {
            return u;
          }
          unrepresentable = true;
          converted = u.substitute();
        }
        out.add(converted);
      } else if (element instanceof List) {
        return new Unrepresentable(null, whole.toString()); // more dimensions
      } else {
        Object converted = each.convert(element);
        if (converted instanceof Unrepresentable) {
          unrepresentable = true;
          out.add(null);
        } else {
          out.add(converted);
        }
      }
    }
    return unrepresentable ? new Unrepresentable(out, whole.toString()) : out;
  }

  /**
   * Debezium's placeholders of unchanged TOASTed arrays ({@code UnchangedToastedPlaceholder}): a
   * one-element list of the placeholder for arrays of text-like types, of its bytes for {@code
   * bytea[]}; for {@code int4[]}, {@code date[]} and {@code int8[]} the placeholder's bytes as
   * numbers; for {@code uuid[]} the name-based UUID of its bytes; null for other arrays.
   */
  private Object arrayToast(ValueMapper element, BuiltinType builtinElement) {
    if (builtinElement != null) {
      switch (builtinElement) {
        case INT4, DATE, INT8 -> {
          List<Object> numbers = new ArrayList<>(placeholderBytes.length);
          for (byte b : placeholderBytes) {
            numbers.add(builtinElement == BuiltinType.INT8 ? (Object) (long) b : (Object) (int) b);
          }
          return builtinElement == BuiltinType.DATE
                  && settings.timePrecisionMode() == TimePrecisionMode.CONNECT
              ? null
              : List.copyOf(numbers);
        }
        case UUID -> {
          return List.of(UUID.nameUUIDFromBytes(placeholderBytes).toString());
        }
        default -> {}
      }
    }
    if (element.unchangedToast() instanceof String s) {
      return List.of(s);
    }
    if (element.unchangedToast() instanceof byte[] b) {
      return List.of(b);
    }
    return null;
  }
}
