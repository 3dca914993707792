/**
 * The JSON-lines output of {@code pgcdc stream} and {@code pgcdc demo} (docs/json-lines.md, "JSON
 * lines (format 1)"), written by {@link io.datum.cdc.cli.json.JsonLinesWriter}.
 *
 * <p>Values, by the Java type {@link io.datum.cdc.event.Row} gives them:
 *
 * <ul>
 *   <li>Short, Integer, Long (and BigInteger): JSON numbers. Float and Double: JSON numbers in the
 *       shortest text that reads back as the same float or double ({@code 0.1}, {@code 3.0}, {@code
 *       1.0E23}; a Float is never widened to double first); NaN and the infinities as the strings
 *       {@code "NaN"}, {@code "Infinity"}, {@code "-Infinity"}.
 *   <li>BigDecimal: a string, {@link java.math.BigDecimal#toPlainString()} (scale kept, never an
 *       exponent: {@code "12.340"}, {@code "0.000001"}). In a {@code numeric} or {@code numeric[]}
 *       column (type OID 1700 / 1231) every number is a string: Double NaN/±Infinity as {@code
 *       "NaN"}/{@code "Infinity"}/{@code "-Infinity"}.
 *   <li>Boolean: true/false. String: a JSON string; quotes, backslashes and control characters
 *       escaped ({@code \n}, {@code \t}, the others as six-character Unicode escapes); all other
 *       characters, non-ASCII included, written as UTF-8 (a character outside the BMP as one 4-byte
 *       sequence).
 *   <li>byte[] (bytea; message content): standard base64 with padding, no line breaks.
 *   <li>UUID: its lower-case text. PgJson: embedded as JSON, unvalidated; CR and LF (only ever
 *       whitespace between tokens in PostgreSQL's json) become spaces, to keep one line per event.
 *   <li>LocalDate {@code "2026-11-30"}; years in ISO astronomical numbering with at least four
 *       digits ({@code "0000-12-31"} is 1 BC, {@code "-0043-03-15"} is 44 BC) and, after 9999, ISO
 *       8601's expanded form with a sign ({@code "+10000-01-01"}), as {@code java.time} prints and
 *       parses them.
 *   <li>LocalTime {@code "10:18:40.5"}, OffsetTime {@code "10:18:40+02:00"} (offset always numeric,
 *       {@code "+00:00"} not {@code "Z"}, seconds of the offset only when non-zero), LocalDateTime
 *       {@code "2026-11-30T10:18:40.123456"}, Instant in UTC {@code "2026-11-30T08:18:40.123456Z"}:
 *       seconds always printed, then the fraction with as many digits as needed, at most six;
 *       digits below the microsecond are cut off.
 *   <li>LocalDate, LocalDateTime, Instant MAX/MIN: {@code "infinity"}/{@code "-infinity"}.
 *   <li>PgInterval: {@link io.datum.cdc.event.PgInterval#toIso8601()}. List: a JSON array, each
 *       element mapped the same way (nested lists for several dimensions, null for NULL).
 *   <li>Anything else: its {@code toString()} as a string.
 * </ul>
 */
package io.datum.cdc.cli.json;
