package io.datum.cdc.event;

import java.util.Locale;

/** The kind of a change event; its lower-case name is the {@code op} of the JSON-lines format. */
public enum ChangeKind {
  /** A row was inserted. */
  INSERT,
  /** A row was updated. */
  UPDATE,
  /** A row was deleted. */
  DELETE,
  /** One TRUNCATE statement on one or more tables. */
  TRUNCATE,
  /** A logical decoding message ({@code pg_logical_emit_message}). */
  MESSAGE,
  /** A row that already existed, read by a snapshot ({@link ReadEvent}). */
  READ;

  /** Returns the name used in the JSON-lines format: {@code insert}, {@code update}, ... */
  public String jsonName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
