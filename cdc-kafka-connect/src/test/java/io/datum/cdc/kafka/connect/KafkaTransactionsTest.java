package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.TransactionContext;
import org.junit.jupiter.api.Test;

class KafkaTransactionsTest {

  /** Connect's side of the contract: the records after which the worker commits. */
  private static final class Commits implements TransactionContext {
    final List<SourceRecord> after = new ArrayList<>();

    @Override
    public void commitTransaction() {
      throw new AssertionError("the task always names the record to commit after");
    }

    @Override
    public void commitTransaction(SourceRecord record) {
      after.add(record);
    }

    @Override
    public void abortTransaction() {
      throw new AssertionError("never aborts");
    }

    @Override
    public void abortTransaction(SourceRecord record) {
      throw new AssertionError("never aborts");
    }
  }

  private static DatumRecord record(int n, boolean endsTransaction) {
    return new DatumRecord(
        Map.of("p", "x"),
        Map.of("n", n),
        "t",
        null,
        null,
        null,
        null,
        0L,
        null,
        null,
        null,
        endsTransaction);
  }

  @Test
  void commitsOnceAfterTheLastPostgresTransactionEndingInTheBatch() {
    Commits c = new Commits();
    KafkaTransactions t = new KafkaTransactions(c, 0);
    // PG transactions of 2, 1, 3 records, then 2 of a 4th still arriving
    List<DatumRecord> batch =
        List.of(
            record(0, false),
            record(1, true),
            record(2, true),
            record(3, false),
            record(4, false),
            record(5, true),
            record(6, false),
            record(7, false));
    t.define(batch);
    assertEquals(List.of(batch.get(5)), c.after);
    // the 4th ends in the next batch, with nothing after it
    List<DatumRecord> next = List.of(record(8, false), record(9, true));
    t.define(next);
    assertEquals(List.of(batch.get(5), next.get(1)), c.after);
  }

  @Test
  void aBatchWithoutATransactionEndCommitsNothing() {
    Commits c = new Commits();
    new KafkaTransactions(c, 0).define(List.of(record(0, false), record(1, false)));
    assertEquals(List.of(), c.after);
  }

  @Test
  void maxRecordsSplitsCountingAcrossBatchesAndRestartsAtEachCommit() {
    Commits c = new Commits();
    KafkaTransactions t = new KafkaTransactions(c, 3);
    List<DatumRecord> first = List.of(record(0, false), record(1, false));
    List<DatumRecord> second =
        List.of(record(2, false), record(3, false), record(4, true), record(5, false));
    t.define(first);
    t.define(second);
    // 3 records open at record 2; record 4 ends the PG transaction; record 5 stays open
    assertEquals(List.of(second.get(0), second.get(2)), c.after);
    t.commitAfter(record(6, true)); // a heartbeat ends what is open and restarts the count
    List<DatumRecord> third = List.of(record(7, false), record(8, false), record(9, false));
    t.define(third);
    assertEquals(4, c.after.size());
    assertEquals(third.get(2), c.after.get(3));
  }
}
