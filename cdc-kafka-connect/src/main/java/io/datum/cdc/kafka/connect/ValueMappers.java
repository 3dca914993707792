package io.datum.cdc.kafka.connect;

import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.PgJson;
import io.datum.cdc.event.PgType;
import io.datum.cdc.kafka.connect.RecordSettings.DecimalMode;
import io.datum.cdc.kafka.connect.RecordSettings.IntervalMode;
import io.datum.cdc.kafka.connect.RecordSettings.TimePrecisionMode;
import io.datum.cdc.kafka.connect.ValueMapper.Converter;
import io.datum.cdc.kafka.connect.ValueMapper.Unrepresentable;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;

/**
 * Builds the {@link ValueMapper} of a column type: the mapping table of
 * docs/kafka-connect-types.md, from what the library's column metadata says of the type ({@link
 * ColumnInfo#type()}): builtin types by name, domains as their base type, enums as Debezium's
 * {@code io.debezium.data.Enum}, arrays as an ARRAY of their element's mapping; a type the library
 * could not describe is a STRING of its text, as the library gives it. No catalog query.
 */
final class ValueMappers {

  /** Debezium's semantic type names (io.debezium.data.*, io.debezium.time.*). */
  static final String JSON = "io.debezium.data.Json";

  static final String UUID_NAME = "io.debezium.data.Uuid";
  static final String XML = "io.debezium.data.Xml";
  static final String TSVECTOR = "io.debezium.data.Tsvector";
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

  private static final Schema VARIABLE_SCALE_DECIMAL_SCHEMA =
      SchemaBuilder.struct()
          .name(VARIABLE_SCALE_DECIMAL)
          .version(1)
          .doc("Variable scaled decimal")
          .field("scale", Schema.INT32_SCHEMA)
          .field("value", Schema.BYTES_SCHEMA)
          .optional()
          .build();

  /**
   * The builtin types whose Connect representation is not plain text, by {@code typname}, and the
   * builtin element types whose arrays the library gives as a {@code List} (docs/pgoutput.md,
   * "Types"): those below, the text types, {@code money}, the network and bit types, {@code
   * pg_lsn}, {@code jsonpath} and the builtin ranges and multiranges. Every other builtin type (and
   * arrays of it: geometric types, {@code tid}, {@code macaddr8}, {@code tsvector}, {@code reg*},
   * ...) is a String of its text output.
   */
  private static final Set<String> LIST_ELEMENTS =
      Set.of(
          "bool",
          "bytea",
          "char",
          "name",
          "int8",
          "int2",
          "int4",
          "text",
          "oid",
          "json",
          "xml",
          "float4",
          "float8",
          "money",
          "macaddr",
          "cidr",
          "inet",
          "bpchar",
          "varchar",
          "date",
          "time",
          "timestamp",
          "timestamptz",
          "interval",
          "timetz",
          "bit",
          "varbit",
          "numeric",
          "uuid",
          "pg_lsn",
          "jsonb",
          "jsonpath",
          "int4range",
          "numrange",
          "tsrange",
          "tstzrange",
          "daterange",
          "int8range",
          "int4multirange",
          "nummultirange",
          "tsmultirange",
          "tstzmultirange",
          "datemultirange",
          "int8multirange");

  private final RecordSettings settings;
  private final String placeholder;
  private final byte[] placeholderBytes;

  /**
   * @param settings the representations to use
   */
  ValueMappers(RecordSettings settings) {
    this.settings = settings;
    this.placeholder = settings.unavailablePlaceholder();
    this.placeholderBytes = placeholder.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Builds the mapping of a column, from what the library says of its type ({@link
   * ColumnInfo#type()}).
   *
   * @param column the column
   * @param dimensions the dimensions an array column is declared with ({@code
   *     pg_attribute.attndims}), at least 1; ignored for other types
   * @return the mapping, with an optional schema
   */
  ValueMapper mapper(ColumnInfo column, int dimensions) {
    return mapper(column.type(), column.typeModifier(), Math.max(1, dimensions));
  }

  /** Builds a mapping of a type, through domains and arrays. */
  private ValueMapper mapper(PgType type, int typmod, int dimensions) {
    int oid = type.oid();
    if (type.isBuiltin()) {
      if (type.kind() == PgType.Kind.ARRAY && isListed(type.element())) {
        String element = type.element().name();
        return array(scalar(element, typmod), "_" + element, element, dimensions);
      }
      if ("tsvector".equals(type.name()) && type.kind() != PgType.Kind.ARRAY) {
        // its text, named as Debezium's (PostgresValueConverter: io.debezium.data.Tsvector)
        return string(TSVECTOR, TEXT_LIKE, "tsvector");
      }
      return isListed(type) ? scalar(type.name(), typmod) : text("oid " + oid);
    }
    if (type.kind() == PgType.Kind.UNKNOWN) {
      return text("oid " + Integer.toUnsignedString(oid) + " (not in the catalog)");
    }
    String name = type.schema() + '.' + type.name();
    return switch (type.kind()) {
      case ARRAY -> {
        ValueMapper element = mapper(type.element(), typmod, 1);
        if (element.converter() == TEXT_LIKE && !listElement(type.element())) {
          // arrays of extension base types are their array_out text in the library
          yield text(name);
        }
        yield array(element, name, null, dimensions);
      }
      case DOMAIN -> mapper(type.base(), typmod >= 0 ? typmod : type.baseModifier(), dimensions);
      case ENUM -> enumMapper(type, name);
      default -> text(name);
    };
  }

  /** Whether a builtin type has a row above (it is no array, and not a text-only type). */
  private static boolean isListed(PgType type) {
    return type.kind() != PgType.Kind.ARRAY
        && type.kind() != PgType.Kind.UNKNOWN
        && LIST_ELEMENTS.contains(type.name());
  }

  /** Whether the library gives arrays of this element type as Lists (not their text). */
  private static boolean listElement(PgType type) {
    if (type.isBuiltin()) {
      return isListed(type);
    }
    return switch (type.kind()) {
      case DOMAIN -> listElement(type.base());
      case ENUM, COMPOSITE, RANGE, MULTIRANGE -> true;
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
  private ValueMapper enumMapper(PgType type, String name) {
    Schema schema =
        SchemaBuilder.string()
            .name(ENUM)
            .version(1)
            .parameter("allowed", String.join(",", type.enumLabels()))
            .optional()
            .build();
    return new ValueMapper(schema, TEXT_LIKE, placeholder, name);
  }

  /** The mapping of a builtin scalar type of {@link #LIST_ELEMENTS}, by its {@code typname}. */
  private ValueMapper scalar(String name, int typmod) {
    return switch (name) {
      case "bool" -> plain(Schema.OPTIONAL_BOOLEAN_SCHEMA, v -> (Boolean) v, name);
      case "int2" -> plain(Schema.OPTIONAL_INT16_SCHEMA, v -> (Short) v, name);
      case "int4" -> plain(Schema.OPTIONAL_INT32_SCHEMA, v -> (Integer) v, name);
      case "int8", "oid" -> plain(Schema.OPTIONAL_INT64_SCHEMA, v -> (Long) v, name);
      case "float4" -> plain(Schema.OPTIONAL_FLOAT32_SCHEMA, v -> (Float) v, name);
      case "float8" -> plain(Schema.OPTIONAL_FLOAT64_SCHEMA, v -> (Double) v, name);
      case "numeric" -> numeric(typmod);
      case "bytea" ->
          new ValueMapper(Schema.OPTIONAL_BYTES_SCHEMA, v -> (byte[]) v, placeholderBytes, name);
      case "uuid" -> string(UUID_NAME, v -> ((UUID) v).toString(), name);
      case "json", "jsonb" -> string(JSON, v -> ((PgJson) v).text(), name);
      case "xml" -> string(XML, TEXT_LIKE, name);
      case "date" -> date();
      case "time" -> time(typmod);
      case "timestamp" -> timestamp(typmod);
      case "timestamptz" -> {
        int width = typmod == 0 ? 0 : Temporals.precision(typmod);
        yield string(ZONED_TIMESTAMP, v -> Temporals.zonedTimestamp(v, width), name);
      }
      case "timetz" -> string(ZONED_TIME, Temporals::zonedTime, name);
      case "interval" ->
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
      ValueMapper element, String typeName, String builtinElement, int dimensions) {
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
  private Object arrayToast(ValueMapper element, String builtinElement) {
    if (builtinElement != null) {
      switch (builtinElement) {
        case "int4", "date", "int8" -> {
          List<Object> numbers = new ArrayList<>(placeholderBytes.length);
          for (byte b : placeholderBytes) {
            numbers.add(builtinElement.equals("int8") ? (Object) (long) b : (Object) (int) b);
          }
          return builtinElement.equals("date")
                  && settings.timePrecisionMode() == TimePrecisionMode.CONNECT
              ? null
              : List.copyOf(numbers);
        }
        case "uuid" -> {
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
