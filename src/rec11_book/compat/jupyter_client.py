"""What the build relies on in jupyter_client (pinned 8.10.0): how a kernel manager takes a
provisioner, and how the local provisioner drives its kernel's process.

Used by ``rec11_book.shared.warmkernels``, which forks page kernels from a process that has
imported torch and pyplot already.
"""

from __future__ import annotations

from rec11_book.compat import lacks_text, reliance


@reliance(probe=lambda: lacks_text("jupyter_client", "if self.provisioner is None:  # will not be None on restarts"))
def set_provisioner(manager, provisioner_class) -> None:
    """Give ``manager`` a provisioner of ``provisioner_class`` before it starts its kernel.

    Relies on: ``KernelManager.pre_start_kernel`` creating a provisioner from the kernel spec
    only when ``manager.provisioner`` is None (so that a restart keeps its own), and a
    provisioner being made as ``cls(kernel_id=, kernel_spec=, parent=manager)``.
    Package: jupyter_client. Checked against: 8.10.0.
    Public alternative: a provisioner registered as an entry point
    (``jupyter_client.kernel_provisioners``) and named in a kernel spec's metadata, which needs
    a kernel spec of the book's own in place of the pages' ``python3``: the pages' kernelspec
    is part of their cache key.
    """
    import uuid

    if manager.provisioner is None:
        manager.kernel_id = manager.kernel_id or str(uuid.uuid4())
        manager.provisioner = provisioner_class(kernel_id=manager.kernel_id, kernel_spec=manager.kernel_spec,
                                                parent=manager)


@reliance(probe=lambda: lacks_text("jupyter_client", "self.process = launch_kernel(cmd, **scrubbed_kwargs)",
                                   "ret = self.process.poll()", "ret = self.process.wait()",
                                   "os.killpg(self.pgid, signum)", "self.process.kill()",
                                   "self.process.terminate()"))
def local_provisioner():
    """jupyter_client's ``LocalProvisioner``, whose ``launch_kernel`` a subclass replaces.

    Relies on: ``LocalProvisioner`` driving its kernel only through ``self.process`` (the
    ``subprocess.Popen`` its ``launch_kernel`` sets: ``poll``, ``wait``, ``send_signal``,
    ``kill``, ``terminate``, ``pid`` and the ``stdin``, ``stdout`` and ``stderr`` it closes),
    ``self.pid``, ``self.pgid`` (signals go to the process group) and ``self.cwd``, and
    ``launch_kernel`` returning ``self.connection_info``, which ``pre_launch`` set.
    Package: jupyter_client. Checked against: 8.10.0.
    Public alternative: ``KernelProvisionerBase`` written whole, which would copy the local
    provisioner's connection-file and port handling (``pre_launch``) instead of reusing it.
    """
    from jupyter_client.provisioning import LocalProvisioner

    return LocalProvisioner
