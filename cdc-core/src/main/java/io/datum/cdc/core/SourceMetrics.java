package io.datum.cdc.core;

import io.datum.cdc.PgLsn;

/**
 * A snapshot of a running source's progress, from {@link PgCdcSource#metrics()}. For the slot's lag
 * as the server sees it (bytes of WAL behind {@code pg_current_wal_lsn()}), use {@code pgcdc
 * status} or {@code pg_replication_slots}.
 *
 * @param watermark the durable watermark: the position confirmed to PostgreSQL
 * @param pendingTransactions delivered (handed to the handler or queued) transactions not yet
 *     behind the watermark
 * @param pendingEvents events of those transactions, acknowledged or not
 * @param transactionsDelivered transactions handed to delivery since the source started
 * @param eventsHandled events the handler returned from since the source started
 * @param eventsPerSecond events handled per second, averaged since the source started
 * @param reconnects connection losses survived by reconnecting
 * @param transactionsSpilled transactions that exceeded the memory budget and went to a spill file,
 *     since the source started (on the current connection)
 */
public record SourceMetrics(
    PgLsn watermark,
    int pendingTransactions,
    long pendingEvents,
    long transactionsDelivered,
    long eventsHandled,
    double eventsPerSecond,
    long reconnects,
    long transactionsSpilled) {}
