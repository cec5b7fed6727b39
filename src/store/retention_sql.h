// SPDX-License-Identifier: Apache-2.0
// SQL that retention runs in the same words on SQLite and PostgreSQL (docs/profile-store.md,
// "Retention and downsampling"): once periods or connections went, the labels and JVMs nothing
// refers to any more.
#pragma once

namespace store {

inline constexpr const char* kDeleteUnreferencedLabels =
    "DELETE FROM labels WHERE jvm_id NOT IN (SELECT jvm_id FROM periods) AND jvm_id NOT IN "
    "(SELECT jvm_id FROM connections)";
inline constexpr const char* kDeleteUnreferencedJvms =
    "DELETE FROM jvms WHERE id NOT IN (SELECT jvm_id FROM periods) AND id NOT IN (SELECT jvm_id "
    "FROM connections)";

}  // namespace store
