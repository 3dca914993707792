/** Implementation classes of the RocksDB checkpoint store; not API, may change in any release. */
package io.datum.cdc.store.rocksdb.internal;
