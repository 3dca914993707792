package io.datum.cdc.cli.json;

import com.fasterxml.jackson.core.JsonGenerator;
import io.datum.cdc.event.PgInterval;
import io.datum.cdc.event.PgJson;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.util.List;
import java.util.UUID;

/**
 * Writes one column value as docs/pgoutput.md's type table maps it, given the Java types of {@link
 * io.datum.cdc.event.Row}. Not thread-safe.
 */
final class JsonValueWriter {

  /** {@code numeric}: always a string, so that no digit or trailing zero is lost. */
  static final int NUMERIC_OID = 1700;

  /** {@code numeric[]}: its elements are written as {@code numeric} values. */
  static final int NUMERIC_ARRAY_OID = 1231;

  private static final String NAN = "NaN";
  private static final String POSITIVE_INFINITY = "Infinity";
  private static final String NEGATIVE_INFINITY = "-Infinity";
  private static final String INFINITY = "infinity";
  private static final String MINUS_INFINITY = "-infinity";

  private final JsonGenerator generator;
  private final TemporalText text = new TemporalText();

  JsonValueWriter(JsonGenerator generator) {
    this.generator = generator;
  }

  /** Returns whether values of a column of this type are written as {@code numeric}. */
  static boolean isNumeric(int typeOid) {
    return typeOid == NUMERIC_OID || typeOid == NUMERIC_ARRAY_OID;
  }

  /**
   * Writes a value.
   *
   * @param value the value as {@link io.datum.cdc.event.Row#get} returns it, or null for SQL NULL
   * @param numeric true if the column is {@code numeric} or {@code numeric[]}: a number that is not
   *     a BigDecimal (PostgreSQL's NaN and infinities arrive as Double) is then written as a string
   *     too
   */
  void write(Object value, boolean numeric) throws IOException {
    if (value == null) {
      generator.writeNull();
    } else if (value instanceof String s) {
      generator.writeString(s);
    } else if (value instanceof Integer i) {
      writeInteger(i, numeric);
    } else if (value instanceof Long l) {
      writeInteger(l, numeric);
    } else if (value instanceof Short s) {
      writeInteger(s, numeric);
    } else if (value instanceof BigDecimal d) {
      generator.writeString(d.toPlainString());
    } else if (value instanceof Double d) {
      writeDouble(d, numeric);
    } else if (value instanceof Float f) {
      writeFloat(f, numeric);
    } else if (value instanceof Boolean b) {
      generator.writeBoolean(b);
    } else if (value instanceof byte[] bytes) {
      generator.writeBinary(bytes);
    } else if (value instanceof UUID uuid) {
      generator.writeString(uuid.toString());
    } else if (value instanceof PgJson json) {
      writeJson(json.text());
    } else if (value instanceof List<?> list) {
      writeArray(list, numeric);
    } else if (value instanceof PgInterval interval) {
      generator.writeString(interval.toIso8601());
    } else if (!writeTemporal(value)) {
      if (value instanceof BigInteger i) {
        writeInteger(i, numeric);
      } else {
        generator.writeString(value.toString());
      }
    }
  }

  private boolean writeTemporal(Object value) throws IOException {
    if (value instanceof Instant v) {
      if (v.equals(Instant.MAX) || v.equals(Instant.MIN)) {
        generator.writeString(v.equals(Instant.MAX) ? INFINITY : MINUS_INFINITY);
      } else {
        generator.writeString(text.buffer(), 0, text.instant(v));
      }
    } else if (value instanceof LocalDateTime v) {
      if (v.equals(LocalDateTime.MAX) || v.equals(LocalDateTime.MIN)) {
        generator.writeString(v.equals(LocalDateTime.MAX) ? INFINITY : MINUS_INFINITY);
      } else {
        generator.writeString(text.buffer(), 0, text.localDateTime(v));
      }
    } else if (value instanceof LocalDate v) {
      if (v.equals(LocalDate.MAX) || v.equals(LocalDate.MIN)) {
        generator.writeString(v.equals(LocalDate.MAX) ? INFINITY : MINUS_INFINITY);
      } else {
        generator.writeString(text.buffer(), 0, text.date(v));
      }
    } else if (value instanceof LocalTime v) {
      generator.writeString(text.buffer(), 0, text.time(v));
    } else if (value instanceof OffsetTime v) {
      generator.writeString(text.buffer(), 0, text.offsetTime(v));
    } else {
      return false;
    }
    return true;
  }

  /** Writes an Instant (the commit time) in UTC. */
  void writeInstant(Instant value) throws IOException {
    writeTemporal(value);
  }

  /**
   * Returns the text {@link #writeInstant} writes for an instant (without quotes).
   *
   * @param value the instant, not null
   * @return its text
   */
  String instantText(Instant value) {
    if (value.equals(Instant.MAX) || value.equals(Instant.MIN)) {
      return value.equals(Instant.MAX) ? INFINITY : MINUS_INFINITY;
    }
    return new String(text.buffer(), 0, text.instant(value));
  }

  private void writeInteger(Number value, boolean numeric) throws IOException {
    if (numeric) {
      generator.writeString(value.toString());
    } else if (value instanceof BigInteger i) {
      generator.writeNumber(i);
    } else if (value instanceof Long) {
      generator.writeNumber(value.longValue());
    } else {
      generator.writeNumber(value.intValue());
    }
  }

  private void writeDouble(double value, boolean numeric) throws IOException {
    String special = special(value);
    if (special != null) {
      generator.writeString(special);
    } else if (numeric) {
      generator.writeString(new BigDecimal(Double.toString(value)).toPlainString());
    } else {
      generator.writeNumber(value);
    }
  }

  private void writeFloat(float value, boolean numeric) throws IOException {
    String special = special(value);
    if (special != null) {
      generator.writeString(special);
    } else if (numeric) {
      generator.writeString(new BigDecimal(Float.toString(value)).toPlainString());
    } else {
      generator.writeNumber(value);
    }
  }

  private static String special(double value) {
    if (Double.isNaN(value)) {
      return NAN;
    }
    if (Double.isInfinite(value)) {
      return value > 0 ? POSITIVE_INFINITY : NEGATIVE_INFINITY;
    }
    return null;
  }

  /**
   * Embeds json/jsonb text as it came from PostgreSQL, unvalidated. A {@code json} value keeps its
   * input text, line breaks included; PostgreSQL rejects raw control characters inside JSON
   * strings, so a CR or LF there can only be whitespace between tokens and is replaced by a space
   * to keep one event per line.
   */
  private void writeJson(String json) throws IOException {
    if (json.indexOf('\n') >= 0 || json.indexOf('\r') >= 0) {
      json = json.replace('\n', ' ').replace('\r', ' ');
    }
    generator.writeRawValue(json);
  }

  private void writeArray(List<?> list, boolean numeric) throws IOException {
    generator.writeStartArray();
    for (Object element : list) {
      write(element, numeric);
    }
    generator.writeEndArray();
  }
}
