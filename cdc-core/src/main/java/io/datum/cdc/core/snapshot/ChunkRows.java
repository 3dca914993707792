package io.datum.cdc.core.snapshot;

import io.datum.cdc.event.Row;
import java.util.List;

/**
 * The rows of one chunk read from a table's key range, in key order.
 *
 * @param rows the decoded rows to deliver, in key order
 * @param keys each row's chunk key as text (as COPY printed it), parallel to {@code rows}
 * @param skipped keys read but left out as acknowledged before a restart
 * @param readThrough the last key read (delivered or skipped), or null if nothing was read
 * @param endsRange true if the read reached the range's end: no row of the range is after it
 */
public record ChunkRows(
    List<Row> rows,
    List<List<String>> keys,
    List<List<String>> skipped,
    List<String> readThrough,
    boolean endsRange) {}
