//! The native objects behind Java's `long` handles, in a table of slots: no handle is ever turned
//! into a pointer.
//!
//! A handle names a slot of the table and the generation of that slot (bits 0..32: the
//! slot, bits 32..64: the generation); the slot holds the object as an
//! `Arc<dyn Any + Send + Sync>` with the name of its type. Each native call takes a *lease*
//! ([`lease`]): it clones the `Arc` of an open handle of the type it expects, and holds it for
//! as long as it uses the object. Closing ([`release`]) only empties the slot and moves its
//! generation on, so the memory is freed when the last lease ends, never under a call that
//! still uses it. A handle that was forged, is stale (its slot emptied, or reused under a
//! later generation), or names an object of another type gives `IllegalStateException`.

use super::{Failure, Result};
use std::any::Any;
use std::sync::{Arc, PoisonError, RwLock};

/// A type whose objects Java holds by handle, with the name its messages give it.
pub(crate) trait Kind: Any + Send + Sync {
    /// The name of the Java class that holds such an object.
    const NAME: &'static str;
}

/// One object of the table, with the name of its type for messages.
struct Entry {
    kind: &'static str,
    value: Arc<dyn Any + Send + Sync>,
}

/// A slot: its current generation, and the object while it is open.
struct Slot {
    generation: u32,
    entry: Option<Entry>,
}

/// The slots, and the empty ones to reuse.
struct Slab {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

/// Every open object of the process. An `RwLock` so that leases, the common case, do not
/// wait on each other; each critical section only moves an `Arc` (no allocation of the
/// objects, no drop of one, no call out), so a panic cannot leave a slot half-changed and a
/// poisoned lock is taken over as it stands.
static REGISTRY: RwLock<Slab> = RwLock::new(Slab {
    slots: Vec::new(),
    free: Vec::new(),
});

fn handle_of(slot: u32, generation: u32) -> i64 {
    ((u64::from(generation) << 32) | u64::from(slot)) as i64
}

/// The slot and generation a handle names.
fn parts(handle: i64) -> (usize, u32) {
    let bits = handle as u64;
    ((bits & 0xffff_ffff) as usize, (bits >> 32) as u32)
}

fn closed() -> Failure {
    Failure::State("the object was closed (or never created): use it before close()".into())
}

/// Gives `value` to Java as a new handle (never 0: generations start at 1).
pub(crate) fn register<T: Kind>(value: T) -> Result<i64> {
    let entry = Entry {
        kind: T::NAME,
        value: Arc::new(value),
    };
    let mut slab = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    let slot = match slab.free.pop() {
        Some(slot) => slot,
        None => {
            let slot = u32::try_from(slab.slots.len()).map_err(|_| {
                Failure::State("too many native objects are open: close some".into())
            })?;
            slab.slots.push(Slot {
                generation: 1,
                entry: None,
            });
            slot
        }
    };
    let cell = &mut slab.slots[slot as usize];
    cell.entry = Some(entry);
    Ok(handle_of(slot, cell.generation))
}

/// A lease on the open object of type `T` that `handle` names: it stays alive while the
/// lease does, whoever closes the handle meanwhile.
pub(crate) fn lease<T: Kind>(handle: i64) -> Result<Arc<T>> {
    let (slot, generation) = parts(handle);
    let (kind, value) = {
        let slab = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
        let entry = slab
            .slots
            .get(slot)
            .filter(|s| s.generation == generation)
            .and_then(|s| s.entry.as_ref())
            .ok_or_else(closed)?;
        (entry.kind, Arc::clone(&entry.value))
    };
    // The lease is dropped outside the lock when it is not of type `T`.
    value.downcast::<T>().map_err(|_| mistyped::<T>(kind))
}

fn mistyped<T: Kind>(kind: &str) -> Failure {
    Failure::State(format!(
        "the handle is of a {kind}, where a {} was expected",
        T::NAME
    ))
}

/// Closes the handle of an object of type `T`: later leases are refused; the object is freed
/// when the leases held now end (here, if there are none).
pub(crate) fn release<T: Kind>(handle: i64) -> Result<()> {
    take(handle, |e| {
        if e.value.is::<T>() {
            Ok(())
        } else {
            Err(mistyped::<T>(e.kind))
        }
    })
}

/// Empties the slot `handle` names, if `check` accepts its entry.
fn take(handle: i64, check: impl FnOnce(&Entry) -> Result<()>) -> Result<()> {
    let (slot, generation) = parts(handle);
    let entry = {
        let mut slab = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
        let cell = slab
            .slots
            .get_mut(slot)
            .filter(|s| s.generation == generation)
            .ok_or_else(closed)?;
        check(cell.entry.as_ref().ok_or_else(closed)?)?;
        let entry = cell.entry.take();
        // A slot whose generations are spent is never reused, so that no handle given out
        // before names a later object.
        cell.generation = cell.generation.wrapping_add(1);
        if cell.generation != 0 {
            slab.free.push(slot as u32);
        }
        entry
    };
    // The object (when no lease holds it) is freed here, outside the lock.
    drop(entry);
    Ok(())
}

/// How many objects are open (registered and not yet released): a leak shows as a count
/// that grows; for tests.
pub(crate) fn live() -> usize {
    let slab = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    slab.slots.iter().filter(|s| s.entry.is_some()).count()
}

/// Handles made in one native call for Java, closed again unless the call hands them over
/// ([`Fresh::hand_over`]), so that a call failing half-way leaks none.
#[derive(Default)]
pub(crate) struct Fresh(Vec<i64>);

impl Fresh {
    /// Registers `value`, as [`register`].
    pub(crate) fn register<T: Kind>(&mut self, value: T) -> Result<i64> {
        let handle = register(value)?;
        self.0.push(handle);
        Ok(handle)
    }

    /// Java has the handles now: none is closed here.
    pub(crate) fn hand_over(mut self) {
        self.0.clear();
    }
}

impl Drop for Fresh {
    fn drop(&mut self) {
        for &handle in &self.0 {
            // Each is open and of its type: it was registered by this call.
            _ = take(handle, |_| Ok(()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    impl Kind for Counted {
        const NAME: &'static str = "Counted";
    }
    impl Kind for String {
        const NAME: &'static str = "String";
    }

    fn state(r: Result<impl Sized>) -> String {
        match r {
            Err(Failure::State(m)) => m,
            Ok(_) => "ok".into(),
            Err(_) => "another failure".into(),
        }
    }

    #[test]
    fn a_lease_outlives_the_close() {
        let drops = Arc::new(AtomicUsize::new(0));
        let h = register(Counted(drops.clone())).unwrap_or_default();
        let held = lease::<Counted>(h).ok();
        assert!(held.is_some());
        assert_eq!(state(release::<Counted>(h)), "ok");
        assert_eq!(drops.load(Ordering::SeqCst), 0, "freed under a lease");
        assert!(state(lease::<Counted>(h)).contains("closed"));
        drop(held);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn stale_forged_and_mistyped_handles_are_refused() {
        let h = register("a".to_string()).unwrap_or_default();
        assert_ne!(h, 0);
        assert!(state(lease::<Counted>(h)).contains("a String, where a Counted"));
        assert!(state(release::<Counted>(h)).contains("a String"));
        assert_eq!(
            lease::<String>(h).ok().as_deref().map(String::as_str),
            Some("a")
        );
        assert_eq!(state(release::<String>(h)), "ok");
        // The slot is reused under a new generation: the old handle stays closed.
        let again = register("b".to_string()).unwrap_or_default();
        assert_ne!(again, h);
        assert!(state(lease::<String>(h)).contains("closed"));
        assert!(state(release::<String>(h)).contains("closed"));
        for forged in [0, 1, -1, i64::MIN, i64::MAX, h ^ (1 << 40), again + 1] {
            assert!(
                state(lease::<String>(forged)).contains("closed"),
                "{forged:#x}"
            );
        }
        assert_eq!(state(release::<String>(again)), "ok");
    }

    #[test]
    fn handles_not_handed_over_are_closed() {
        let mut fresh = Fresh::default();
        let kept = fresh.register("d".to_string()).unwrap_or_default();
        drop(fresh);
        assert!(state(lease::<String>(kept)).contains("closed"));
        let mut fresh = Fresh::default();
        let given = fresh.register("e".to_string()).unwrap_or_default();
        fresh.hand_over();
        assert_eq!(state(release::<String>(given)), "ok");
    }

    #[test]
    fn a_slot_whose_generations_are_spent_is_retired() {
        let h = register("c".to_string()).unwrap_or_default();
        let (slot, _) = parts(h);
        REGISTRY
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .slots[slot]
            .generation = u32::MAX;
        let last = handle_of(slot as u32, u32::MAX);
        assert_eq!(state(release::<String>(last)), "ok");
        let slab = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
        assert!(!slab.free.contains(&(slot as u32)));
    }
}
