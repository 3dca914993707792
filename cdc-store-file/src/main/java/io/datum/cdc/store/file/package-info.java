/**
 * A crash-safe {@link io.datum.cdc.CdcCheckpointStore} that keeps one file per slot in a directory:
 * {@link io.datum.cdc.store.file.FileCheckpointStore}, URI {@code file:/var/lib/app/cdc}.
 */
package io.datum.cdc.store.file;
