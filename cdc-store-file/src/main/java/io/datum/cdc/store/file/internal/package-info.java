/** Implementation classes of the file checkpoint store; not API, may change in any release. */
package io.datum.cdc.store.file.internal;
