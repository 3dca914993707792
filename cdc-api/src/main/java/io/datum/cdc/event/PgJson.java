package io.datum.cdc.event;

import java.util.Objects;

/**
 * A {@code json} or {@code jsonb} value as the JSON text PostgreSQL sent; the JSON-lines output
 * embeds it as JSON, not as a string.
 *
 * @param text the JSON document text, not null
 */
public record PgJson(String text) {

  /**
   * @throws NullPointerException if {@code text} is null
   */
  public PgJson {
    Objects.requireNonNull(text, "text");
  }

  @Override
  public String toString() {
    return text;
  }
}
