/**
 * A {@link io.datum.cdc.CdcCheckpointStore} that keeps every slot's checkpoint in one RocksDB
 * database: {@link io.datum.cdc.store.rocksdb.RocksDbCheckpointStore}, URI {@code
 * rocksdb:/var/lib/app/cdc-rocks}.
 */
package io.datum.cdc.store.rocksdb;
