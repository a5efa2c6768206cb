"""Annotated site PWMs from the tiny dataset's training block; datasets without regions."""

import shutil

import h5py
import numpy as np
import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.genome.dataset import SiteDataset
from sparling_genomics.genome.pwm import consensus
from sparling_genomics.genome.site_pwms import annotated_site_pwm


def test_annotated_pwms_show_gt_at_the_donor_and_ag_at_the_acceptor(tiny_dataset):
    data = SiteDataset(tiny_dataset)
    donor, n_donor = annotated_site_pwm(data, "donor")
    acceptor, n_acceptor = annotated_site_pwm(data, "acceptor")
    assert donor.shape == acceptor.shape == (31, 4) and n_donor > 50 and n_acceptor > 50
    np.testing.assert_allclose(donor.sum(axis=1), 1.0)
    # Column 15 is the labelled base: the donor's last exon base, the acceptor's first.
    assert consensus(donor)[16:18] == "GT"
    assert consensus(acceptor)[13:15] == "AG"
    assert donor[16, 2] > 0.9 and acceptor[14, 2] > 0.9
    # The training block only: a test-block PWM counts other sites.
    _, n_test = annotated_site_pwm(data, "donor", split="test")
    assert n_test != n_donor
    with pytest.raises(InputError, match="no site class 'tss'"):
        annotated_site_pwm(data, "tss")


def test_a_dataset_without_regions_still_loads(tiny_dataset, tmp_path):
    old = tmp_path / "old.h5"
    shutil.copy(tiny_dataset, old)
    with h5py.File(old, "a") as h5:
        del h5["region"]
    data = SiteDataset(old)
    assert not data.has_regions and data.regions(data.indices("test")) is None
    assert SiteDataset(tiny_dataset).regions(np.array([3, 0])).shape == (2, data.window)
