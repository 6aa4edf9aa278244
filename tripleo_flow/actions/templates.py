"""Template rendering action."""

from __future__ import annotations

from typing import Any

from tripleo_flow.actions.base import Action, Rerun, encode_blobs
from tripleo_flow.actions.undo import restore_objects
from tripleo_flow.common import crashpoints
from tripleo_flow.core.plan import rendering
from tripleo_flow.plans import render_record
from tripleo_flow.plans.plan import MANIFEST, UNRENDERED, PlanRepository


class ProcessTemplates(Action):
    """Render a plan's j2 templates (per role, per network, once) into the plan.

    It completes a template update: the mark the update left (its new templates
    not rendered yet) goes once the rendered files are written.
    """

    rerun = Rerun.CONVERGES

    def execute(self, plan: str) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        store = self.context.store
        with self.context.hold_plan(plan, rendering=True):
            unrendered = repo.unrendered(plan)
            files = repo.files(plan)
            manifest = repo.manifest(plan)
            files.prefetch(rendering.render_inputs(files))  # one request each, at once
            reads: set[str] = set()
            max_size = self.context.limit("render_max_size")
            rendered = rendering.render_plan(
                files, max_size=max_size, timeout=self.context.seconds("render_timeout"),
                reads=reads)
            existing = set(files)
            stale = sorted(p for p in manifest.rendered if p not in rendered and p in existing)
            backup: dict[str, bytes] = {MANIFEST: manifest.to_bytes()}
            changed: dict[str, bytes] = {}
            files.prefetch([p for p in rendered if p in existing] + stale)
            for path, data in rendered.items():
                if path in existing:
                    old = files[path]
                    if old == data:
                        continue
                    backup[path] = old
                changed[path] = data
            for path in stale:
                backup[path] = files[path]
            if unrendered is not None:  # a revert marks the templates unrendered again
                backup[UNRENDERED] = store.get_object(plan, UNRENDERED)
            # A re-run (a resumed job) finds the files rendered and gets the first run's
            # backup: reverting it then still puts back what the plan had.
            undo = self.context.undo_record(lambda: {
                "created": sorted(p for p in changed if p not in existing),
                "backup": encode_blobs(backup),
                "previous_rendered": list(manifest.rendered)})
            manifest.rendered = sorted(rendered)
            # Its record, when the render read none of what it changes (then the
            # files written render the same: a reader may take the outputs as they are).
            manifest.render = (None if reads & (set(changed) | set(stale))
                               else render_record.make(files, reads, rendered, max_size))
            store.put_objects(plan, changed)
            crashpoints.reached("templates.process:written")
            store.delete_objects(plan, stale)
            repo.save_manifest(plan, manifest)
            if unrendered is not None:
                repo.clear_unrendered(plan)
            repo.start_history(plan)  # a create's history starts with its rendered tree
        return {"files": sorted(rendered), "written": sorted(changed), "removed": stale,
                **undo}

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Restore the rendered files as they were (and the mark of an update's
        templates not rendered yet) and remove the ones this run added."""
        restore_objects(self.context, plan, result)
