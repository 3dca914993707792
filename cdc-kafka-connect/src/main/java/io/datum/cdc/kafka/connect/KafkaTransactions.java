package io.datum.cdc.kafka.connect;

import java.util.List;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.TransactionContext;

/**
 * Where Connect commits Kafka transactions under {@code transaction.boundary=connector}: after the
 * last record of a batch that ends a PostgreSQL transaction, so the PostgreSQL transactions a poll
 * returns share one Kafka transaction (one commit, not one each) and a {@code read_committed}
 * consumer sees each of them whole; records after it (a PostgreSQL transaction still arriving) stay
 * in the open Kafka transaction. With a record limit, also after every that many records since the
 * last commit, inside a PostgreSQL transaction if need be. Used by the task's poll thread only.
 */
final class KafkaTransactions {

  private final TransactionContext context;
  private final int maxRecords;
  private int open;

  /**
   * @param context Connect's transaction context of the task
   * @param maxRecords {@code transaction.max.records}: 0 for no limit
   */
  KafkaTransactions(TransactionContext context, int maxRecords) {
    this.context = context;
    this.maxRecords = maxRecords;
  }

  /** Marks the commits of one poll's batch, in order. */
  void define(List<DatumRecord> batch) {
    int lastEnd = -1;
    for (int i = batch.size() - 1; i >= 0; i--) {
      if (batch.get(i).endsTransaction()) {
        lastEnd = i;
        break;
      }
    }
    for (int i = 0; i < batch.size(); i++) {
      open++;
      if (i == lastEnd || (maxRecords > 0 && open >= maxRecords)) {
        context.commitTransaction(batch.get(i));
        open = 0;
      }
    }
  }

  /** Commits after a record returned on its own (a heartbeat), which ends what is open. */
  void commitAfter(SourceRecord record) {
    context.commitTransaction(record);
    open = 0;
  }
}
