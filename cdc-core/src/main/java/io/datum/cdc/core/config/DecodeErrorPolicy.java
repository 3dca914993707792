package io.datum.cdc.core.config;

/**
 * What the source does with a change one of whose column values it cannot decode to the Java type
 * the type mapping gives (docs/pgoutput.md, "Types"): a type dropped from the catalog before the
 * source read the change and not decodable from the stream alone, an extension type in binary mode,
 * a value the decoders reject. The message itself being malformed is not a decode error of this
 * kind: it always stops the source. Set with {@link
 * io.datum.cdc.core.PgCdcSource.Builder#onDecodeError} ({@code pgcdc stream --on-decode-error
 * stop|raw|skip}); the default is {@link #RAW}, argued in docs/configuration.md.
 */
public enum DecodeErrorPolicy {
  /**
   * Stop the source with a {@link io.datum.cdc.CdcDecodingException} naming the column, table, type
   * and value. The change and everything after it are not delivered; the events of earlier
   * transactions already decoded are delivered first. Since the slot cannot move past the change,
   * every restart stops at it again until the cause is fixed (or the policy changed), and the
   * server keeps the WAL from there on.
   */
  STOP,
  /**
   * Deliver the change with each undecodable column holding its value as PostgreSQL sent it: the
   * text (a String) for a text-format value, the send-format bytes (a {@code byte[]}) for a
   * binary-format one. {@link io.datum.cdc.event.Row#undecodedColumns()} lists those columns
   * ({@code pgcdc}'s JSON lines: {@code "undecoded"}); the source logs the first values of each
   * column and type at WARN and counts the events in {@link
   * io.datum.cdc.core.SourceMetrics#eventsWithUndecoded()}. Nothing is lost and the stream never
   * halts. The default.
   */
  RAW,
  /**
   * Skip the change: it is not delivered, the source acknowledges it itself (so the slot moves past
   * it), counts it in {@link io.datum.cdc.core.SourceMetrics#eventsSkipped()} and logs table,
   * column, type oid and name, and the transaction's LSNs at WARN. The change is lost to the
   * handler; use it only where the log and the counter are watched.
   */
  SKIP
}
