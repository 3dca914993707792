package io.datum.cdc.core.config;

/**
 * The pgoutput {@code streaming} option: whether PostgreSQL sends a large transaction while it is
 * still in progress (once it exceeds the server's {@code logical_decoding_work_mem}), instead of
 * spilling it to disk on the server and sending it after its commit (PostgreSQL docs, 55.5 Logical
 * Streaming Replication Protocol, and 31.x "Logical Replication", streaming).
 *
 * <p>datum-cdc buffers streamed chunks (in memory up to the source's memory budget, then in a spill
 * file) and delivers a transaction only at its Stream Commit; nothing of an aborted transaction or
 * subtransaction is delivered.
 */
public enum StreamingMode {
  /** Not sent ({@code streaming} off): transactions arrive whole after their commit. */
  OFF,
  /** {@code streaming = on}: protocol version 2, PostgreSQL 14 and later. */
  ON,
  /**
   * {@code streaming = parallel}: protocol version 4, PostgreSQL 16 and later; Stream Abort then
   * carries the abort LSN and time. For datum-cdc the same as {@link #ON} otherwise.
   */
  PARALLEL
}
