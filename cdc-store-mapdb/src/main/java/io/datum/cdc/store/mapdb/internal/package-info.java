/** Implementation classes of the MapDB checkpoint store; not API, may change in any release. */
package io.datum.cdc.store.mapdb.internal;
