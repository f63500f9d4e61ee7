// A gjs program that loads JavaScript plugins: the gjs loader runs them in
// this program's own context (a thread holds one at most), and their
// types are there to use.
//
// SPDX-License-Identifier: LGPL-2.1-or-later
import GObject from 'gi://GObject';
import Symfonic from 'gi://Symfonic?version=1.0';
import System from 'system';

const [folder] = System.programArgs;
const registry = Symfonic.Registry.get_default();
registry.scan();
registry.load_directory(folder);

const type = registry.lookup('js-prefix');
if (type === GObject.TYPE_INVALID)
    throw new Error('js-prefix is not registered');
const stage = GObject.Object.new_with_properties(type, ['prefix'], ['>']);
if (!(stage instanceof Symfonic.Stage) || stage.prefix !== '>')
    throw new Error('js-prefix is not a configurable stage');
