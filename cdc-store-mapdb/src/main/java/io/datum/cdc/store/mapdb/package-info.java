/**
 * A crash-safe {@link io.datum.cdc.CdcCheckpointStore} that keeps every slot's checkpoint in MapDB
 * 3.1 files, two written in turn under a checksummed selector: {@link
 * io.datum.cdc.store.mapdb.MapDbCheckpointStore}, URI {@code mapdb:/var/lib/app/cdc.mapdb}.
 */
package io.datum.cdc.store.mapdb;
