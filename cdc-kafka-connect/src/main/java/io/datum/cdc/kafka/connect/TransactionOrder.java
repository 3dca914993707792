package io.datum.cdc.kafka.connect;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.event.TransactionInfo;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.connect.data.Struct;

/**
 * Fills Debezium's transaction block ({@code AbstractTransactionStructMaker.addTransactionBlock},
 * {@code PostgresTransactionMonitor}): {@code id} {@code <xid>:<commit LSN>}, {@code total_order}
 * the record's 1-based position among the transaction's records with a value, {@code
 * data_collection_order} the same among those of one table (topic). Records are counted, not
 * events, as Debezium counts them: a key change's delete and create are two. Both counts need every
 * event of the transaction from its first: when the first event converted of a transaction is not
 * its first (the task resumed in the middle of it), or events come out of order, the transaction's
 * records get no block (null) rather than a wrong count.
 */
final class TransactionOrder {

  private long txEndLsn = -1;
  private long xid = -1;
  private int lastIndex = -1;
  private boolean countable;
  private long records;
  private final Map<String, long[]> perCollection = new HashMap<>();

  /**
   * Returns the block of one record of an event (a record with a value: not a tombstone).
   *
   * @param offset the event's offset
   * @param tx the event's transaction
   * @param collection the record's data collection (its topic), counted once per call
   * @return the block, or null when the per-collection order is not known
   */
  Struct block(CdcOffset offset, TransactionInfo tx, String collection) {
    long end = offset.txEndLsn().asLong();
    int index = offset.eventIndex();
    if (end != txEndLsn || offset.xid() != xid || index < lastIndex) {
      txEndLsn = end;
      xid = offset.xid();
      perCollection.clear();
      records = 0;
      countable = index == 0;
    } else if (index > lastIndex + 1) {
      countable = false; // an event of the transaction was not converted
    }
    lastIndex = index;
    if (!countable) {
      return null;
    }
    long[] count = perCollection.computeIfAbsent(collection, c -> new long[1]);
    count[0]++;
    return new Struct(TableSchema.TRANSACTION_BLOCK)
        .put("id", tx.xid() + ":" + tx.commitLsn().asLong())
        .put("total_order", ++records)
        .put("data_collection_order", count[0]);
  }
}
