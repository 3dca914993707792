/**
 * The streaming decode path measured on its own: pgoutput messages through the transaction
 * assembler to events, as the replication loop and the hand-off drive it ({@link
 * io.datum.cdc.benchmarks.decode.DecodeBenchmark}); results in {@code docs/benchmarks.md}.
 */
package io.datum.cdc.benchmarks.decode;
