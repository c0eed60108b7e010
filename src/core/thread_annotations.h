// Clang's thread-safety annotations (-Wthread-safety), as LevelDB's port/thread_annotations.h.
//
// They turn "guarded by mutex_" from prose into something the compiler checks: a field marked
// GUARDED_BY(mu) may be touched only with `mu` held, a function marked REQUIRES(mu) may be called
// only with it held, EXCLUDES(mu) only without. Other compilers see nothing. CI builds the tree
// with clang and -Wthread-safety -Werror (scripts/build.sh tsan).
#pragma once

#if defined(__clang__)
#define SUANLI_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SUANLI_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) SUANLI_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY SUANLI_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) SUANLI_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) SUANLI_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) SUANLI_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) SUANLI_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) SUANLI_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define EXCLUDES(...) SUANLI_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) SUANLI_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) SUANLI_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS SUANLI_THREAD_ANNOTATION(no_thread_safety_analysis)
