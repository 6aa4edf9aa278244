"""Plans: the containers of Heat templates plus ``plan-environment.yaml``, in Swift or in
the embedded local store behind one interface (:mod:`.store`), the plan repository over
them (:mod:`.plan`), the locks that serialize a plan's writers (:mod:`.lock`), and
where a plan's templates come from (a directory, a tarball: :mod:`.sources`)."""
