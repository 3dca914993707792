/**
 * The datum-cdc API: {@link io.datum.cdc.PgLsn}, {@link io.datum.cdc.CdcOffset}, the handler and
 * checkpoint handle, checkpoint stores ({@link io.datum.cdc.CheckpointStores}) and the exception
 * hierarchy rooted at {@link io.datum.cdc.CdcException}. Nothing here is null unless documented.
 */
package io.datum.cdc;
